//! Reference server: routes.
