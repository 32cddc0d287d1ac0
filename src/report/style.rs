//! Colour for every console renderer: whether to colour at all (`--color`, and for `auto`
//! NO_COLOR, FORCE_COLOR, CLICOLOR_FORCE, CLICOLOR, TERM and terminal detection), whether a
//! progress display can redraw, and the styles that name outcomes, so the run, fuzz and diff
//! consoles look alike.

use std::io::IsTerminal;

use anstyle::{AnsiColor, Effects, Style};

/// When to colour output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorMode {
    /// Colour on a terminal, unless NO_COLOR is set.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// Whether to colour stdout.
pub fn use_color(mode: ColorMode) -> bool {
    match mode {
        ColorMode::Always => true,
        ColorMode::Never => false,
        ColorMode::Auto => auto_color(std::io::stdout().is_terminal(), &env_var),
    }
}

/// Whether to colour stderr (error messages and diagnostics), as [`use_color`]'s `auto`.
pub fn use_color_on_stderr() -> bool {
    auto_color(std::io::stderr().is_terminal(), &env_var)
}

fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Whether a variable is set to something that turns it on: set, not empty, not `0` nor
/// `false`.
fn on(var: Option<String>) -> bool {
    var.is_some_and(|v| !v.is_empty() && v != "0" && !v.eq_ignore_ascii_case("false"))
}

/// `--color auto`: NO_COLOR turns colour off; else FORCE_COLOR or CLICOLOR_FORCE turn it on
/// even in a pipe or a CI log; else a terminal gets colour unless TERM is `dumb` or CLICOLOR
/// is `0`.
pub fn auto_color(is_terminal: bool, var: &dyn Fn(&str) -> Option<String>) -> bool {
    if var("NO_COLOR").is_some_and(|v| !v.is_empty()) {
        return false;
    }
    if on(var("FORCE_COLOR")) || on(var("CLICOLOR_FORCE")) {
        return true;
    }
    is_terminal && var("TERM").as_deref() != Some("dumb") && var("CLICOLOR").as_deref() != Some("0")
}

/// Whether a terminal can redraw a progress display in place: stderr is a terminal whose TERM
/// is not `dumb`, outside CI. Elsewhere the console prints heartbeat lines instead.
pub fn can_redraw(stderr_is_terminal: bool, var: &dyn Fn(&str) -> Option<String>) -> bool {
    stderr_is_terminal && var("TERM").as_deref() != Some("dumb") && var("CI").is_none()
}

/// [`can_redraw`] for this process's stderr and environment.
pub fn stderr_can_redraw() -> bool {
    can_redraw(std::io::stderr().is_terminal(), &env_var)
}

/// A passing outcome.
pub const PASS: Style = AnsiColor::Green.on_default();
/// A warning.
pub const WARN: Style = AnsiColor::Yellow.on_default();
/// A failure or an error.
pub const FAIL: Style = AnsiColor::Red.on_default().effects(Effects::BOLD);
/// Secondary text.
pub const DIM: Style = Style::new().effects(Effects::DIMMED);

/// Paints text in a style, or leaves it plain when colour is off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Palette {
    color: bool,
}

impl Palette {
    /// A palette that colours only when `color` is true.
    pub fn new(color: bool) -> Palette {
        Palette { color }
    }

    /// Whether this palette colours.
    pub fn is_color(self) -> bool {
        self.color
    }

    /// `text` in `style` (plain without colour).
    pub fn paint(self, style: Style, text: &str) -> String {
        if self.color {
            format!("{}{text}{}", style.render(), style.render_reset())
        } else {
            text.to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_palettes_add_no_escape_codes() {
        assert_eq!(Palette::new(false).paint(FAIL, "FAIL"), "FAIL");
        let painted = Palette::new(true).paint(FAIL, "FAIL");
        assert!(
            painted.starts_with('\u{1b}') && painted.contains("FAIL"),
            "{painted:?}"
        );
        assert!(painted.ends_with("\u{1b}[0m"), "{painted:?}");
    }

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn auto_colour_follows_the_conventions() {
        assert!(auto_color(true, &env(&[])), "a terminal");
        assert!(!auto_color(false, &env(&[])), "a pipe");
        assert!(auto_color(false, &env(&[("FORCE_COLOR", "1")])));
        assert!(auto_color(false, &env(&[("FORCE_COLOR", "true")])));
        assert!(!auto_color(false, &env(&[("FORCE_COLOR", "0")])));
        assert!(!auto_color(false, &env(&[("FORCE_COLOR", "false")])));
        assert!(auto_color(false, &env(&[("CLICOLOR_FORCE", "1")])));
        assert!(!auto_color(false, &env(&[("CLICOLOR_FORCE", "")])));
        assert!(!auto_color(true, &env(&[("NO_COLOR", "1")])));
        assert!(
            !auto_color(true, &env(&[("NO_COLOR", "1"), ("FORCE_COLOR", "1")])),
            "NO_COLOR wins, as before"
        );
        assert!(!auto_color(true, &env(&[("TERM", "dumb")])));
        assert!(!auto_color(true, &env(&[("CLICOLOR", "0")])));
    }

    #[test]
    fn only_a_real_terminal_redraws() {
        assert!(can_redraw(true, &env(&[("TERM", "xterm-256color")])));
        assert!(!can_redraw(true, &env(&[("TERM", "dumb")])));
        assert!(!can_redraw(true, &env(&[("CI", "true")])));
        assert!(!can_redraw(false, &env(&[])));
    }

    #[test]
    fn explicit_modes_ignore_the_terminal() {
        assert!(use_color(ColorMode::Always));
        assert!(!use_color(ColorMode::Never));
    }
}
