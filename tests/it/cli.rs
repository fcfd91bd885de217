//! The `avguard` binary as a user runs it.

use tests::avguard;

#[test]
fn help_lists_every_command() {
    let out = avguard()
        .arg("--help")
        .output()
        .expect("run avguard --help");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for command in [
        "demo", "simulate", "inspect", "laws", "learn", "info", "export", "score", "bridge",
        "drive",
    ] {
        assert!(
            text.contains(command),
            "--help does not mention `{command}`:\n{text}"
        );
    }
}
