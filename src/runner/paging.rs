//! The paging walker of the mall list (spec §4.1).
