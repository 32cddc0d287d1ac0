//! A record that has been through the run's redactor. Sinks take only this type, so a case
//! result or a fuzz failure reaches a console line, a report file or a snapshot only after
//! every text from outside in it became [`Shown`](crate::redact::Shown) text: scrubbed, then
//! escaped, then capped. Only [`seal`] makes one, and it always runs the record's
//! [`Sealable::seal_texts`]; a `Sealed` gives read access, never write access, so nothing
//! unscrubbed can be added after the seal.

use std::ops::Deref;

use serde::Serialize;

use crate::redact::Redactor;

/// A record holding text from outside.
pub trait Sealable {
    /// Makes every text from outside in the record `Shown` text with `redactor`.
    fn seal_texts(&mut self, redactor: &Redactor);
}

/// `T`, sealed (see the module doc).
#[derive(Debug, Clone, Serialize)]
#[serde(transparent)]
pub struct Sealed<T>(T);

/// `record` with every text from outside made `Shown` by `redactor`: the one way to make a
/// [`Sealed`].
pub fn seal<T: Sealable>(mut record: T, redactor: &Redactor) -> Sealed<T> {
    record.seal_texts(redactor);
    Sealed(record)
}

impl<T> Sealed<T> {
    /// The record, to be changed and sealed again (a changed record is not sealed).
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> Deref for Sealed<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}
