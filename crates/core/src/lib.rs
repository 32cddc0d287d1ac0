//! mallcheck's lower layers (see the root crate's `lib.rs` and README "How the code is laid
//! out"): what every command shares and nothing above it may be imported by.

pub mod atomic;
pub mod cpu;
pub mod dataset;
pub mod diag;
pub mod exit;
pub mod flag_range;
pub mod heap;
pub mod json;
pub mod local_file;
pub mod redact;
pub mod shipped;
pub mod sign;
pub mod spec;
pub mod verdict;

#[cfg(test)]
#[global_allocator]
static COUNTING: json::heap_probe::Counting = json::heap_probe::Counting;
