//! What to run: [`ChildCommand`] and where its stderr goes ([`StderrMode`]).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// Where the child's stderr goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StderrMode {
    /// Each line becomes a `tracing` event of target `ferry::child` at this level, with the
    /// fields `program` and `pid`; invalid UTF-8 is replaced. Never written to our stdout.
    Log(tracing::Level),
    /// The child writes to this process's stderr directly.
    Inherit,
    /// Discarded (`/dev/null`).
    Discard,
    /// Copied to this process's stderr as it comes, bytes unchanged, through a pipe: what
    /// [`Inherit`](Self::Inherit) shows, and [`ChildProcess::stderr_tail`](super::ChildProcess::stderr_tail)
    /// keeps its last lines too (to say why a server did not start, say). The child's
    /// stderr is then a pipe, not this process's terminal: a program that colours its
    /// output only on a terminal writes it plain.
    Relay,
}

impl Default for StderrMode {
    /// [`StderrMode::Log`] at `INFO`.
    fn default() -> Self {
        StderrMode::Log(tracing::Level::INFO)
    }
}

/// What to run: program, arguments, environment, working directory.
///
/// Defaults: no arguments; the environment of this process, unchanged; its working
/// directory; stderr logged at `INFO` ([`StderrMode::default`]); the child in a process group
/// of its own ([`ChildCommand::own_process_group`]).
#[derive(Clone, Debug)]
pub struct ChildCommand {
    program: OsString,
    args: Vec<OsString>,
    env_clear: bool,
    env: Vec<(OsString, Option<OsString>)>,
    cwd: Option<PathBuf>,
    pub(super) stderr: StderrMode,
    pub(super) own_process_group: bool,
}

impl ChildCommand {
    /// Run `program`, looked up in `PATH` unless it contains a `/`.
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        ChildCommand {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            env_clear: false,
            env: Vec::new(),
            cwd: None,
            stderr: StderrMode::default(),
            own_process_group: true,
        }
    }

    /// Add an argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Add arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Set an environment variable of the child (later calls for the same key win).
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env
            .push((key.as_ref().to_owned(), Some(value.as_ref().to_owned())));
        self
    }

    /// Set environment variables of the child.
    pub fn envs<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        for (key, value) in vars {
            self = self.env(key, value);
        }
        self
    }

    /// Remove an environment variable from the child's environment.
    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Self {
        self.env.push((key.as_ref().to_owned(), None));
        self
    }

    /// Start the child with an empty environment (and forget earlier [`env`](Self::env) and
    /// [`env_remove`](Self::env_remove) calls); later `env` calls add to it. Note that
    /// without `PATH` a program name without `/` is looked up in a default path.
    pub fn env_clear(mut self) -> Self {
        self.env_clear = true;
        self.env.clear();
        self
    }

    /// The child's working directory. Default: this process's. A relative `program` is
    /// resolved against it.
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.cwd = Some(dir.as_ref().to_owned());
        self
    }

    /// Where the child's stderr goes. Default: [`StderrMode::Log`] at `INFO`.
    pub fn stderr(mut self, mode: StderrMode) -> Self {
        self.stderr = mode;
        self
    }

    /// Whether the child gets a process group of its own (`setpgid(0, 0)`, done by the
    /// standard library without `unsafe`). Default: yes.
    ///
    /// In its own group the child does not receive the terminal's `SIGINT` when the user
    /// presses Ctrl-C, so its owner decides how it ends, and the shutdown signals (`SIGTERM`,
    /// `SIGKILL`, also on drop) go to the whole group, so helpers the server started (an
    /// `npx` or shell wrapper's children) end with it. Signals go to the group only while the
    /// child itself has not been reaped (its pid cannot have been reused).
    ///
    /// On Windows the child gets a console process group of its own instead
    /// (`CREATE_NEW_PROCESS_GROUP`), so the console's Ctrl-C does not reach it either; the
    /// kill that ends it there reaches the child only, not processes it started.
    pub fn own_process_group(mut self, yes: bool) -> Self {
        self.own_process_group = yes;
        self
    }

    /// The program.
    pub fn program(&self) -> &OsStr {
        &self.program
    }

    pub(super) fn to_tokio(&self) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(&self.program);
        command.args(&self.args);
        if self.env_clear {
            command.env_clear();
        }
        for (key, value) in &self.env {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
        if let Some(dir) = &self.cwd {
            command.current_dir(dir);
        }
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(match self.stderr {
                StderrMode::Log(_) | StderrMode::Relay => Stdio::piped(),
                StderrMode::Inherit => Stdio::inherit(),
                StderrMode::Discard => Stdio::null(),
            })
            .kill_on_drop(true);
        #[cfg(unix)]
        if self.own_process_group {
            command.process_group(0);
        }
        #[cfg(windows)]
        if self.own_process_group {
            // CREATE_NEW_PROCESS_GROUP, from the Windows SDK's process creation flags.
            const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
            command.creation_flags(CREATE_NEW_PROCESS_GROUP);
        }
        command
    }
}
