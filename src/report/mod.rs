//! Events and the sinks that render them: console, JUnit, JSON, Markdown, HTML.

pub mod actions;
pub mod cadence;
pub mod ci_run;
pub mod console;
pub mod diff;
pub mod file;
pub mod fuzz;
pub mod html;
pub mod json;
pub mod junit;
pub mod lock;
pub mod markdown;
pub mod merge;
pub mod style;
pub mod text;

use std::io;

use crate::verdict::event::Event;

/// A consumer of run events. Every implementation matches [`Event`] exhaustively.
pub trait Sink {
    /// Handles one event.
    fn on_event(&mut self, event: &Event) -> io::Result<()>;
    /// Called once after the last event.
    fn finish(&mut self) -> io::Result<()>;
}

/// Hands every event to every sink; remembers the first error of each without stopping the run.
#[derive(Default)]
pub struct FanOut {
    sinks: Vec<(Box<dyn Sink>, Option<io::Error>)>,
}

impl FanOut {
    /// Adds a sink.
    pub fn push(&mut self, sink: Box<dyn Sink>) {
        self.sinks.push((sink, None));
    }

    /// Dispatches an event.
    pub fn on_event(&mut self, event: &Event) {
        for (sink, error) in &mut self.sinks {
            if let Err(e) = sink.on_event(event) {
                error.get_or_insert(e);
            }
        }
    }

    /// Finishes every sink and returns the errors seen, at most one per sink.
    pub fn finish(self) -> Vec<io::Error> {
        self.sinks
            .into_iter()
            .filter_map(|(mut sink, error)| match (error, sink.finish()) {
                (Some(e), _) | (None, Err(e)) => Some(e),
                (None, Ok(())) => None,
            })
            .collect()
    }
}
