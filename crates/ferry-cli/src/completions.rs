//! `ferry completions SHELL` and `ferry man`: a shell's completion script and the manual
//! page, generated from the command's own clap definitions so that they never drift.

use std::io::Write as _;
use std::process::ExitCode;

/// `ferry completions`.
#[derive(clap::Args)]
pub(crate) struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

/// Print the completion script of `args.shell` for `command`.
pub(crate) fn completions(args: &CompletionsArgs, mut command: clap::Command) -> ExitCode {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "ferry", &mut script);
    write_out(&script)
}

/// Print the manual page of `command` (roff), its subcommands' options included.
pub(crate) fn man(command: clap::Command) -> ExitCode {
    let mut page = Vec::new();
    if let Err(e) = clap_mangen::Man::new(command.clone()).render(&mut page) {
        crate::stderr::note!("ferry: cannot render the manual page: {e}");
        return ExitCode::FAILURE;
    }
    // One section per subcommand after the main page, as `git help` pages list theirs.
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        let _ = writeln!(page, ".SH \"FERRY {}\"", sub.get_name().to_uppercase());
        if let Some(about) = sub.get_about() {
            let _ = writeln!(page, "{about}");
        }
        if let Err(e) = clap_mangen::Man::new(sub.clone()).render_options_section(&mut page) {
            crate::stderr::note!("ferry: cannot render the manual page: {e}");
            return ExitCode::FAILURE;
        }
    }
    write_out(&page)
}

/// Write `bytes` to stdout; a closed stdout (`| head`) is not an error worth a message.
fn write_out(bytes: &[u8]) -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            crate::stderr::note!("ferry: cannot write to stdout: {e}");
            ExitCode::FAILURE
        }
    }
}
