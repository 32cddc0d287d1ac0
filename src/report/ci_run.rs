//! The CI run a report was written in, as its CI service names it (`github:1234567`), so that
//! `merge` can tell the shards of one pipeline from a stale shard an earlier pipeline left in
//! a shared workspace or cache (h26c F15): each shard of a run has the same id.

/// Per CI service: its name and the variable holding the id of the whole run, shared by every
/// job of it (GitHub's run id, not its attempt: a re-run of one failed shard keeps the run's
/// id, and its shards still merge with the others).
const SERVICES: [(&str, &str); 8] = [
    ("github", "GITHUB_RUN_ID"),
    ("gitlab", "CI_PIPELINE_ID"),
    ("azure", "BUILD_BUILDID"),
    ("jenkins", "BUILD_TAG"),
    ("buildkite", "BUILDKITE_BUILD_ID"),
    ("circleci", "CIRCLE_WORKFLOW_ID"),
    ("travis", "TRAVIS_BUILD_ID"),
    ("bitbucket", "BITBUCKET_PIPELINE_UUID"),
];

/// The run's id as `service:id`, from the first service whose variable `var` gives.
pub fn ci_run(var: impl Fn(&str) -> Option<String>) -> Option<String> {
    SERVICES.iter().find_map(|(service, name)| {
        let value = var(name)?;
        let value = value.trim();
        // Spelt alike in every report (XML drops or changes some characters, `]]>` among
        // them) and on any line: what is not a plain character of an id is `_`.
        let id: String = value
            .chars()
            .take(200)
            .map(|c| {
                if c.is_ascii_alphanumeric() || "._:/@#+=-".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        (!id.is_empty()).then(|| format!("{service}:{id}"))
    })
}

/// [`ci_run`] of this process's environment.
pub fn current() -> Option<String> {
    ci_run(|name| std::env::var(name).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_id_names_its_service() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(
            ci_run(env(&[("GITHUB_RUN_ID", "42"), ("GITHUB_RUN_ATTEMPT", "2")])),
            Some("github:42".to_string())
        );
        assert_eq!(
            ci_run(env(&[("CI_PIPELINE_ID", " 7 ")])),
            Some("gitlab:7".to_string())
        );
        assert_eq!(
            ci_run(env(&[("BUILD_TAG", "jenkins-my job]]>\n-7")])),
            Some("jenkins:jenkins-my_job____-7".to_string())
        );
        assert_eq!(ci_run(env(&[("CI", "true")])), None);
    }
}
