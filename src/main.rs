// glibc's malloc took a sixth of the load generator's time at its cap, much of it waiting on
// arena locks between the runtime's threads; mimalloc's per-thread heaps do not.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    linkcert::cli::main()
}
