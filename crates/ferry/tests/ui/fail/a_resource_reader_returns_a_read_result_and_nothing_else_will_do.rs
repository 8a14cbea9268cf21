// A resource reader returns a ReadResult. (The file's long name keeps rustc's message in
// one shape wherever the repository is checked out: it names the reader's closure by its
// path, and moves a long label into a `help` line.)
#[ferry::resource("config://app")]
async fn config() -> String {
    "{}".into()
}

fn main() {}
