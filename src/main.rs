//! The `kibitz` command. The command line (flags, validation, progress
//! bars, summaries) lives here, in the binary; the library `kibitz` does
//! the work and knows nothing of flags.

use std::process::ExitCode;

mod cli;

fn main() -> ExitCode {
    cli::main()
}
