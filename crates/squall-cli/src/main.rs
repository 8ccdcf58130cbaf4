//! The `squall` binary: parses the command line and maps failures to exit code 2.

use std::process::ExitCode;

use clap::Parser;

mod cli;

#[tokio::main]
async fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { ExitCode::from(2) } else { ExitCode::SUCCESS };
        }
    };
    match cli::run(cli).await {
        Ok(code) => code,
        // Whoever read standard output stopped reading (`squall scenarios list | head -1`).
        Err(e) if cli::stdout::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("squall: {e:#}");
            ExitCode::from(2)
        }
    }
}
