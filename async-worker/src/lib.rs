//! Placeholder: the worker runtime lands with its own issue.
