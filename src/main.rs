fn main() -> std::process::ExitCode {
    linkcert::cli::main()
}
