//! The image step's temporary root: the binary at `/llm-d-async`, its symlink at `/usr/local/bin/async-worker`, exactly the shared libraries `ldd` lists and the CA bundle, all read-only; removed on drop.

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::Command;

use super::failed;
use crate::Error;

/// Where Debian, and so the distroless base, keeps the CA certificates.
const CA_BUNDLE: &str = "/etc/ssl/certs/ca-certificates.crt";

/// The temporary root; made writable again and removed on drop.
pub(super) struct Root {
    pub(super) dir: PathBuf,
    /// Each file's path in the root and its size.
    pub(super) files: Vec<(String, u64)>,
}

impl Root {
    /// The binary, its symlink and its libraries, all read-only.
    pub(super) fn lay_out(binary: &Path) -> Result<Root, Error> {
        let dir = std::env::temp_dir().join(format!("xtask-image-root-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let mut root = Root {
            dir,
            files: Vec::new(),
        };
        root.copy(binary, "/llm-d-async")?;
        root.strip_debug("/llm-d-async")?;
        let link = root.dir.join("usr/local/bin/async-worker");
        fs::create_dir_all(link.parent().expect("a parent"))
            .map_err(|e| failed(&link, "create", e))?;
        symlink("/llm-d-async", &link).map_err(|e| failed(&link, "symlink", e))?;
        root.files
            .push(("/usr/local/bin/async-worker -> /llm-d-async".into(), 0));
        // The distroless base ships the CA bundle; the HTTP client will not
        // build without one (rustls loads the system's roots).
        let bundle = Path::new(CA_BUNDLE);
        if !bundle.is_file() {
            return Err(Error::Failed(format!(
                "{CA_BUNDLE} is missing: the image ships a CA bundle there and the binary needs one (install ca-certificates)"
            )));
        }
        root.copy(bundle, CA_BUNDLE)?;
        for library in libraries(binary)? {
            root.copy(Path::new(&library), &library)?;
        }
        set_modes(&root.dir, 0o555, 0o555).map_err(|e| failed(&root.dir, "chmod", e))?;
        Ok(root)
    }

    /// `strip --strip-debug` on `path` in the root, as the Dockerfile does
    /// to the binary (the release profile's line tables dropped).
    fn strip_debug(&mut self, path: &str) -> Result<(), Error> {
        let file = self.dir.join(path.trim_start_matches('/'));
        let status = Command::new("strip")
            .arg("--strip-debug")
            .arg(&file)
            .status()
            .map_err(|e| Error::Failed(format!("could not run `strip` (install binutils): {e}")))?;
        if !status.success() {
            return Err(Error::Failed(format!(
                "`strip --strip-debug {}` failed ({status})",
                file.display()
            )));
        }
        let bytes = fs::metadata(&file)
            .map_err(|e| failed(&file, "stat", e))?
            .len();
        if let Some(entry) = self.files.iter_mut().find(|(p, _)| p == path) {
            entry.1 = bytes;
        }
        Ok(())
    }

    /// Copies `from` (symlinks followed) to `to` inside the root.
    fn copy(&mut self, from: &Path, to: &str) -> Result<(), Error> {
        let dest = self.dir.join(to.trim_start_matches('/'));
        fs::create_dir_all(dest.parent().expect("a parent"))
            .map_err(|e| failed(&dest, "create", e))?;
        let bytes = fs::copy(from, &dest).map_err(|e| failed(from, "copy", e))?;
        self.files.push((to.to_owned(), bytes));
        Ok(())
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        let _ = set_modes(&self.dir, 0o755, 0o644);
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// Sets every directory under `dir` (itself included) to `dirs` and every
/// regular file to `files` (symlinks untouched).
fn set_modes(dir: &Path, dirs: u32, files: u32) -> std::io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        let kind = fs::symlink_metadata(&path)?.file_type();
        if kind.is_dir() {
            set_modes(&path, dirs, files)?;
        } else if kind.is_file() {
            fs::set_permissions(&path, fs::Permissions::from_mode(files))?;
        }
    }
    fs::set_permissions(dir, fs::Permissions::from_mode(dirs))
}

/// The absolute paths of the shared libraries `ldd` lists for `binary`
/// (none for a static one; the vDSO has no file).
fn libraries(binary: &Path) -> Result<Vec<String>, Error> {
    let out = Command::new("ldd")
        .arg(binary)
        .output()
        .map_err(|e| Error::Failed(format!("could not run `ldd` (install libc-bin): {e}")))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        if text.contains("not a dynamic executable") {
            return Ok(Vec::new());
        }
        return Err(Error::Failed(format!(
            "`ldd {}` failed: {}",
            binary.display(),
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    parse_ldd(&text)
}

/// `libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)` and
/// `/lib64/ld-linux-x86-64.so.2 (0x…)` give their paths.
fn parse_ldd(text: &str) -> Result<Vec<String>, Error> {
    let mut paths = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let path = match line.split_once("=>") {
            Some((_, rest)) => rest.trim(),
            None => line,
        };
        let path = path.split(" (").next().unwrap_or_default().trim();
        if path == "not found" {
            return Err(Error::Failed(format!(
                "ldd cannot find a library the binary needs: `{line}`"
            )));
        }
        if path.starts_with('/') {
            paths.push(path.to_owned());
        }
    }
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ldd_lines_give_the_library_paths_and_a_missing_one_is_an_error() {
        let text = "\tlinux-vdso.so.1 (0x00007ffd)\n\tlibgcc_s.so.1 => /lib/x86_64-linux-gnu/libgcc_s.so.1 (0x00007f01)\n\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f02)\n\t/lib64/ld-linux-x86-64.so.2 (0x00007f03)\n";
        assert_eq!(
            parse_ldd(text).ok(),
            Some(vec![
                "/lib/x86_64-linux-gnu/libgcc_s.so.1".to_owned(),
                "/lib/x86_64-linux-gnu/libc.so.6".to_owned(),
                "/lib64/ld-linux-x86-64.so.2".to_owned(),
            ])
        );
        assert!(matches!(
            parse_ldd("\tlibssl.so.3 => not found\n"),
            Err(Error::Failed(_))
        ));
    }
}
