//! The context of a claim's validation ([`Ctx`]), shared by the loader
//! ([`super::load`]) and the parts it calls (points, predictions, provenance, external
//! cores), which import this file and not the loader.
use super::SpecError;

/// The validation's context: the file named in errors, and the errors collected so far
/// ([`super::load::validate_all`] goes on after an error where what follows does not
/// depend on it).
pub(super) struct Ctx<'a> {
    pub(super) file: &'a str,
    pub(super) errors: std::cell::RefCell<Vec<SpecError>>,
}

impl Ctx<'_> {
    /// Records an error and goes on.
    pub(super) fn report(&self, e: SpecError) {
        self.errors.borrow_mut().push(e);
    }
    /// Records the error of a result, if any, and gives its value.
    pub(super) fn keep<T>(&self, r: Result<T, SpecError>) -> Option<T> {
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                self.report(e);
                None
            }
        }
    }

    pub(super) fn err(&self, field: impl Into<String>, message: impl Into<String>) -> SpecError {
        SpecError {
            file: self.file.to_string(),
            field: field.into(),
            message: message.into(),
        }
    }
}
