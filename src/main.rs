//! Thin binary: parse arguments, call the library, map errors to exit codes.
fn main() -> std::process::ExitCode {
    dpclaims::cli::main()
}
