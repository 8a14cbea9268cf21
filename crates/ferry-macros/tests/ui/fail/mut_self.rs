// Handlers run concurrently on one shared value: no `&mut self`.
struct Counter(u64);

#[ferry::tools]
impl Counter {
    #[tool]
    async fn hit(&mut self) -> String {
        self.0 += 1;
        self.0.to_string()
    }
}

fn main() {}
