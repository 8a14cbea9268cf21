//! `ferry completions` and `ferry man`, generated from the clap definitions: bash really
//! completes with the script, and the manual page documents every subcommand's options.

use std::process::Command;

fn ferry(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(args)
        .output()
        .expect("run ferry");
    assert!(output.status.success(), "ferry {args:?} failed");
    String::from_utf8(output.stdout).expect("UTF-8")
}

#[test]
fn bash_completes_subcommands_and_options_with_the_script() {
    let script = ferry(&["completions", "bash"]);
    let complete = |words: &str, word: usize| {
        let program = format!(
            "{script}\nCOMP_WORDS=({words}); COMP_CWORD={word}; COMP_LINE='{words}'; \
             COMP_POINT=${{#COMP_LINE}}; \
             _ferry ferry \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"; \
             printf '%s\\n' \"${{COMPREPLY[@]}}\""
        );
        let output = Command::new("bash")
            .args(["-c", &program])
            .output()
            .expect("bash");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    };
    let subcommands = complete("ferry se", 1);
    assert!(subcommands.lines().any(|l| l == "serve"), "{subcommands}");
    let options = complete("ferry serve --ht", 2);
    assert!(options.lines().any(|l| l == "--http"), "{options}");
}

#[test]
fn the_other_shells_get_scripts_naming_the_subcommands() {
    for shell in ["zsh", "fish", "powershell", "elvish"] {
        let script = ferry(&["completions", shell]);
        for name in ["serve", "check", "bridge", "inspect", "call"] {
            assert!(script.contains(name), "{shell} lacks {name}");
        }
    }
}

#[test]
fn the_manual_page_documents_every_subcommand() {
    let page = ferry(&["man"]);
    assert!(
        page.contains(".TH ferry 1"),
        "{}",
        &page[..200.min(page.len())]
    );
    for section in [
        "FERRY SERVE",
        "FERRY CHECK",
        "FERRY BRIDGE",
        "FERRY INSPECT",
        "FERRY CALL",
    ] {
        assert!(
            page.contains(&format!(".SH \"{section}\"")),
            "no section {section}"
        );
    }
    // An option of a subcommand is in its section.
    let serve = page.split(".SH \"FERRY SERVE\"").nth(1).unwrap();
    let serve = serve.split(".SH \"FERRY").next().unwrap();
    assert!(serve.contains("\\-\\-http"), "{serve}");
}
