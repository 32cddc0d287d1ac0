//! Keeps the README in step with the code: the fault table, and the test command CI runs.

use mallcheck::server::faults::Fault;

const BEGIN: &str = "<!-- faults:begin -->";
const END: &str = "<!-- faults:end -->";

fn fault_table() -> String {
    let mut out = String::from("| fault | what is broken | verdict |\n|---|---|---|\n");
    for f in Fault::all() {
        let verdict = match (f.is_fuzz_trigger(), f.expected_check()) {
            _ if f.is_secret_echo() => format!(
                "exit {} (refused); for the secrets tests",
                f.expected_exit()
            ),
            (true, Some(id)) => format!("found by `mallcheck fuzz`: `{id}`"),
            (false, Some(id)) => format!("exit {}, `{id}`", f.expected_exit()),
            (_, None) => "tolerated: exit 0".to_string(),
        };
        out.push_str(&format!(
            "| `{}` | {} | {} |\n",
            f.name(),
            f.description().replace('|', "\\|"),
            verdict
        ));
    }
    out
}

#[test]
fn readme_fault_table_matches_the_fault_modes() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
    let readme = std::fs::read_to_string(path).unwrap();
    let start = readme.find(BEGIN).expect("faults:begin marker") + BEGIN.len();
    let end = readme.find(END).expect("faults:end marker");
    let expected = format!("\n{}", fault_table());
    if readme[start..end] != expected {
        if std::env::var_os("MALLCHECK_BLESS").is_some() {
            let updated = format!("{}{}{}", &readme[..start], expected, &readme[end..]);
            std::fs::write(path, updated).unwrap();
            return;
        }
        panic!(
            "README fault table is stale; rerun with MALLCHECK_BLESS=1 and commit. Expected:\n{expected}"
        );
    }
}

#[test]
fn ci_runs_the_readme_test_command() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let ci = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/.ci/run")).unwrap();
    let command = "cargo test --locked";
    assert!(readme.contains(command) && ci.contains(command));
}
