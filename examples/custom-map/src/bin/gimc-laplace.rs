//! `gimc-laplace`: the whole `gimc` command line with the Laplacian random-feature map added.
//! `gimc-laplace fit bibtex --method gimc-llff …` learns it, `imc-llff` keeps its random draw,
//! and `gimc-laplace predict` reads the model files it writes (as well as every built-in one).

use std::process::ExitCode;

fn main() -> ExitCode {
    match custom_map::registry() {
        Ok(registry) => gimc_cli::main_with(registry),
        Err(e) => {
            #[allow(clippy::print_stderr)]
            {
                eprintln!("gimc-laplace: error: {e}");
            }
            ExitCode::FAILURE
        }
    }
}
