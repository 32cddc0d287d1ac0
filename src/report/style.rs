//! Colour for every console renderer: whether to colour at all (`--color`, and for `auto`
//! NO_COLOR, CLICOLOR_FORCE and terminal detection, through anstream) and the styles that
//! name outcomes, so the run, fuzz and diff consoles look alike.

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
        ColorMode::Auto => {
            let stdout = std::io::stdout();
            stdout.is_terminal()
                && anstream::AutoStream::choice(&stdout) != anstream::ColorChoice::Never
        }
    }
}

/// Whether to colour stderr (error messages and diagnostics): on a terminal, unless NO_COLOR
/// is set.
pub fn use_color_on_stderr() -> bool {
    let stderr = std::io::stderr();
    stderr.is_terminal() && anstream::AutoStream::choice(&stderr) != anstream::ColorChoice::Never
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

    #[test]
    fn explicit_modes_ignore_the_terminal() {
        assert!(use_color(ColorMode::Always));
        assert!(!use_color(ColorMode::Never));
    }
}
