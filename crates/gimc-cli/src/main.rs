//! The `gimc` binary: the command line of [`gimc_cli`] with the built-in feature maps.

use std::process::ExitCode;

/// mimalloc, told to keep freed pages for reuse ([`gimc_linalg::memory::retain_freed_pages`]):
/// the large, short-lived n × m blocks of a fit then cost no fresh page faults or unmap
/// shoot-downs each time (glibc unmaps blocks over 32 MiB).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    gimc_linalg::memory::retain_freed_pages();
    gimc_cli::main_with(gimc_cli::MapRegistry::builtin())
}
