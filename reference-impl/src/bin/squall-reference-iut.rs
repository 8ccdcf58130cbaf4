//! The reference implementation as an IUT adapter: `squall run --iut squall-reference-iut`.

fn main() -> std::process::ExitCode {
    squall_reference::contract::main_from_env()
}
