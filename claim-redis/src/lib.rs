//! Placeholder: the Redis claim store lands with its own issue.
