//! `squall init CLIENT`: writes one of squall's adapters ([`super::starters`]) into the user's
//! project — the client as shipped behind the IUT contract, its version pinned — and prints how
//! to install the client and the one command that judges it. It never overwrites a file: when
//! any file it would write exists, it writes nothing and says which.

use std::fs::OpenOptions;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context as _};

use super::starters::{Runtime, Starter, STARTERS};
use super::stdout;

/// The options of `squall init`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct InitArgs {
    /// The client to write an adapter for (`python-openai`, `node-ai-sdk`, …; `--list` lists them).
    #[arg(required_unless_present = "list")]
    pub client: Option<String>,
    /// Where to write it (default: squall-adapters/CLIENT).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// List the clients and what each drives.
    #[arg(long)]
    pub list: bool,
}

pub(crate) fn init(args: InitArgs) -> anyhow::Result<ExitCode> {
    let Some(name) = args.client.filter(|_| !args.list) else {
        for starter in STARTERS {
            stdout::line(format_args!("{:22} {}", starter.name, starter.client))?;
        }
        return Ok(ExitCode::SUCCESS);
    };
    let starter = find(&name)?;
    let dir = args.dir.unwrap_or_else(|| Path::new("squall-adapters").join(starter.name));
    let written = write_all(starter, &dir)?;
    let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
    stdout::line(format_args!("squall init: wrote {} — {}", names.join(", "), starter.client))?;
    let (install, command) = commands(starter, &dir);
    stdout::line(format_args!("install its client:  {install}"))?;
    stdout::line(format_args!("then judge it:       {command}"))?;
    Ok(ExitCode::SUCCESS)
}

fn find(name: &str) -> anyhow::Result<&'static Starter> {
    if let Some(starter) = STARTERS.iter().find(|s| s.name == name) {
        return Ok(starter);
    }
    let known: Vec<&str> = STARTERS.iter().map(|s| s.name).collect();
    bail!("no adapter named {name:?}: squall init knows {} (squall init --list)", known.join(", "))
}

/// Writes every file of `starter` into `dir`, or none: a file that exists stops it before any is
/// written, and a write that fails removes what this call wrote.
fn write_all(starter: &Starter, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let paths: Vec<PathBuf> = starter.files.iter().map(|(file, _)| dir.join(file)).collect();
    let existing: Vec<String> = paths.iter().filter(|p| p.exists()).map(|p| p.display().to_string()).collect();
    if !existing.is_empty() {
        let verb = if existing.len() == 1 { "exists" } else { "exist" };
        bail!("squall init writes no file over another: {} {verb} (choose another --dir)", existing.join(", "));
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut written = Vec::new();
    for (path, (_, contents)) in paths.iter().zip(starter.files) {
        // create_new: a file that appeared since the check above is not overwritten either.
        let wrote = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .and_then(|mut f| f.write_all(contents.as_bytes()));
        if let Err(error) = wrote {
            for done in &written {
                let _ = std::fs::remove_file(done);
            }
            return Err(error).with_context(|| format!("cannot write {}", path.display()));
        }
        written.push(path.clone());
    }
    Ok(written)
}

/// How to install the client, and the command that judges it: a Python client started warm (its
/// SDK imported once a run, not once a case: half the CPU, docs/iut-contract.md); a Node client
/// four cases at a time, since each case starts a Node process (BENCHMARKS.md, time to judge).
fn commands(starter: &Starter, dir: &Path) -> (String, String) {
    let entry = shell_word(&dir.join(starter.entry()).display().to_string());
    let (install, program, how) = match starter.runtime {
        Runtime::Python => {
            let requirements = shell_word(&dir.join("requirements.txt").display().to_string());
            (format!("pip install -r {requirements}"), "python3", " --warm")
        }
        Runtime::Node => {
            (format!("npm ci --prefix {}", shell_word(&dir.display().to_string())), "node", " --concurrency 4")
        }
    };
    (install, format!("squall run --iut \"{program} {entry}{}\"{how} --level wire", starter.args))
}

/// `word` as one shell word: as it is when it needs no quoting, else in single quotes.
fn shell_word(word: &str) -> String {
    if word.chars().all(|c| c.is_ascii_alphanumeric() || "_./-+:@".contains(c)) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}
