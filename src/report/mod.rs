//! Events and the sinks that render them: console, JUnit, JSON.

pub mod console;
pub mod event;
pub mod json;
pub mod junit;
