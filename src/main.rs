//! The `kibitz` command: a thin layer over the library (see `kibitz::cli`).

use std::process::ExitCode;

fn main() -> ExitCode {
    kibitz::cli::main()
}
