//! ACL users for tests: a user with a password and full rights on a private server, made with `redis-cli ACL SETUSER`.

use super::process::cli;

/// Creates (or resets) `user` with `password`, all keys, channels and
/// commands, on the plain server at `port`.
pub fn add_acl_user(port: u16, user: &str, password: &str) -> std::io::Result<()> {
    let pass = format!(">{password}");
    cli(
        port,
        &[
            "ACL", "SETUSER", user, "reset", "on", &pass, "~*", "&*", "+@all",
        ],
    )
    .map(|_| ())
}
