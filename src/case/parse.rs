//! Case-file text to [`super::model`], collecting every error with its position.
