//! The `mallcheck` binary: parse the command line, call the library, render any error, exit.

use mallcheck::exit;
use mallcheck::redact::Redactor;

fn main() {
    mallcheck::heap::tune();
    let cli = match mallcheck::app::command_line::parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() {
                exit::USAGE
            } else {
                exit::PASS
            };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    // The command's redactor: its session registers the secrets it resolves here, so an error,
    // even one raised before the session was complete, is scrubbed of what was known by then.
    let redactor = Redactor::new();
    let reports = mallcheck::app::report_paths(&cli);
    let code = match mallcheck::app::main(cli, &redactor) {
        Ok(code) => code,
        Err(e) => {
            let color = mallcheck::report::style::use_color_on_stderr();
            for text in e.render_each(color) {
                mallcheck::say::stderr_line!("error: {}", redactor.scrub(&text));
            }
            if !e.keeps_reports() {
                mallcheck::app::remove_earlier_reports(&reports);
            }
            exit::USAGE
        }
    };
    std::process::exit(code);
}
