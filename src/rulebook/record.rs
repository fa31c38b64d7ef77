//! The compiled record `stalwart rules compile` writes and `verify` reads as it is (SPEC 2.4;
//! seed chapter 45: "a folder stalwart rules compile wrote is read as it is").
//!
//! A record folder holds one `record.json`:
//!
//! ```text
//! {
//!   "format": "stalwart-rulebook-record/1",
//!   "version": 1,                       // this layout; a reader refuses another
//!   "compiler": "stalwart-verify 0.1.0",
//!   "content_hash": "sha256:<64 hex>",  // over the record with this field empty
//!   "kind": "colang" | "sheet",
//!   "colang_version": "1.0" | "2.x" | null,
//!   "version_from": "<why that version>",
//!   "sources": [{"path": "policy.co", "sha256": "<64 hex>", "text": "<the file>"}],
//!   "compiled": { <rulebook::compile::Compiled: files, atoms, routes, executes, ...> }
//! }
//! ```
//!
//! The sources are kept whole so that findings read from a record still show their lines; the
//! hash makes an edited record an error rather than a different proof.

use sha2::{Digest, Sha256};

use super::compile::Compiled;

/// The `format` of a record.
pub(crate) const FORMAT: &str = "stalwart-rulebook-record/1";
/// The layout version this build writes and reads.
pub(crate) const VERSION: u32 = 1;
/// The file name inside a record folder.
pub(crate) const FILE_NAME: &str = "record.json";

/// One source file of the rulebook, kept in the record.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct RecordSource {
    /// The file as it was displayed when compiled.
    pub(crate) path: String,
    /// The SHA-256 of its text, hex.
    pub(crate) sha256: String,
    /// Its text.
    pub(crate) text: String,
}

/// A compiled rulebook record (see the module docs for the JSON).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Record {
    /// Always [`FORMAT`].
    pub(crate) format: String,
    /// Always [`VERSION`] for records this build writes.
    pub(crate) version: u32,
    /// The compiler that wrote it.
    pub(crate) compiler: String,
    /// `sha256:<hex>` over the record serialised with this field empty.
    pub(crate) content_hash: String,
    /// `colang` or `sheet`.
    pub(crate) kind: String,
    /// The Colang version the sources were read as (`null` for a sheet).
    pub(crate) colang_version: Option<String>,
    /// Why that version (`agent.yaml settings`, `config.yml beside the rulebook`, `the default`).
    pub(crate) version_from: String,
    /// The source files.
    pub(crate) sources: Vec<RecordSource>,
    /// What the compiler read.
    pub(crate) compiled: Compiled,
}

/// The two fields a record is recognised by, whatever else the JSON holds.
#[derive(Debug, Default, serde::Deserialize)]
struct Header {
    format: Option<serde_json::Value>,
    version: Option<serde_json::Value>,
}

/// A writer that hashes what it is given (the record is hashed as it is serialised, never held
/// as bytes).
struct HashWriter(Sha256);

impl std::io::Write for HashWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Hex SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

impl Record {
    /// A record of `compiled`, its hash filled in.
    pub(crate) fn new(
        kind: &str,
        colang_version: Option<String>,
        version_from: String,
        sources: Vec<(String, String)>,
        compiled: Compiled,
    ) -> Record {
        let mut r = Record::unhashed(kind, colang_version, version_from, sources, compiled);
        r.content_hash = r.hash();
        r
    }

    /// [`Record::new`] without its content hash (a placeholder of the same length in its
    /// place): what the record budget measures ([`Record::json_len`]) before the hash is worth
    /// computing.
    pub(crate) fn unhashed(
        kind: &str,
        colang_version: Option<String>,
        version_from: String,
        sources: Vec<(String, String)>,
        compiled: Compiled,
    ) -> Record {
        Record {
            format: FORMAT.to_string(),
            version: VERSION,
            compiler: format!("stalwart-verify {}", env!("CARGO_PKG_VERSION")),
            kind: kind.to_string(),
            colang_version,
            version_from,
            sources: sources
                .into_iter()
                .map(|(path, text)| RecordSource {
                    sha256: sha256_hex(text.as_bytes()),
                    path,
                    text,
                })
                .collect(),
            compiled,
            content_hash: format!("sha256:{}", "0".repeat(64)),
        }
    }

    /// Bytes of [`Record::to_json`], counted without writing it.
    pub(crate) fn json_len(&self) -> usize {
        super::budget::pretty_json_bytes(self) + 1
    }

    /// `sha256:<hex>` over the record (compact JSON) with `content_hash` empty (it is emptied
    /// while the record is hashed, then put back).
    pub(crate) fn hash(&mut self) -> String {
        let kept = std::mem::take(&mut self.content_hash);
        let mut h = HashWriter(Sha256::new());
        let _ = serde_json::to_writer(&mut h, &*self);
        self.content_hash = kept;
        format!("sha256:{}", hex(&h.0.finalize()))
    }

    /// The record as pretty JSON, ending in a newline.
    pub(crate) fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Reads a record from its JSON. Errors (as text, for the caller to place): not JSON of this
    /// shape, another format or version, a content hash that does not match (edited since it
    /// was compiled), a source whose hash does not match its text.
    pub(crate) fn from_json(text: &str) -> Result<Record, String> {
        // Read in passes that hold no copy of the whole (a record may be as large as any
        // input): the syntax, then the format and version, then the record.
        serde_json::from_str::<serde::de::IgnoredAny>(text)
            .map_err(|e| format!("not JSON: {e}"))?;
        let head: Header = serde_json::from_str(text).unwrap_or_default();
        let format = head.format.as_ref().and_then(|f| f.as_str()).unwrap_or("");
        if format != FORMAT {
            return Err(format!(
                "its format is '{format}', not '{FORMAT}': it is not a record `stalwart rules compile` wrote"
            ));
        }
        let version = head.version.as_ref().and_then(|f| f.as_u64()).unwrap_or(0);
        if version != u64::from(VERSION) {
            return Err(format!(
                "it is a version {version} record; this build reads version {VERSION}: recompile it with `stalwart rules compile`"
            ));
        }
        let mut r: Record = serde_json::from_str(text).map_err(|e| format!("not a record: {e}"))?;
        let want = r.hash();
        if r.content_hash != want {
            return Err(format!(
                "its content hash is {} but its content hashes to {want}: it was changed after it was compiled; recompile it with `stalwart rules compile`",
                r.content_hash
            ));
        }
        for s in &r.sources {
            if sha256_hex(s.text.as_bytes()) != s.sha256 {
                return Err(format!(
                    "the source '{}' it holds does not match its hash; recompile it",
                    s.path
                ));
            }
        }
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back_and_an_edit_is_refused() {
        let r = Record::new(
            "colang",
            Some("1.0".into()),
            "the default".into(),
            vec![("policy.co".into(), "define flow x\n  stop\n".into())],
            Compiled::default(),
        );
        assert!(r.content_hash.starts_with("sha256:") && r.content_hash.len() == 71);
        let back = Record::from_json(&r.to_json()).expect("reads back");
        assert_eq!(back, r);
        let edited = r.to_json().replace("the default", "edited");
        let e = Record::from_json(&edited).expect_err("edited");
        assert!(e.contains("changed after it was compiled"), "{e}");
        let other = r.to_json().replace(FORMAT, "something/1");
        assert!(Record::from_json(&other)
            .expect_err("foreign")
            .contains("not a record"));
    }
}
