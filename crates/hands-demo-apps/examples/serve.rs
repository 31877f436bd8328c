//! Serves the booking app until stdin closes, then prints the saved bookings: a way to look at
//! the app in a browser. `cargo run -p hands-demo-apps --example serve [DB_PATH]`

#![allow(
    clippy::print_stdout,
    reason = "printing the address and bookings is the example's job"
)]

use hands_demo_apps::{BookingApp, BookingAppConfig, bookings};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut config = BookingAppConfig::default();
    if let Some(path) = std::env::args_os().nth(1) {
        config = config.with_db_path(path);
    }
    let app = BookingApp::start(config).await?;
    println!(
        "serving {} (database {})",
        app.base_url(),
        app.db_path().display()
    );
    println!("close stdin (Ctrl-D) to stop");
    tokio::task::spawn_blocking(|| std::io::read_to_string(std::io::stdin())).await??;
    for booking in bookings(app.db_path())? {
        println!("{} {booking:?}", booking.reference());
    }
    println!("{:?}", app.requests_seen());
    Ok(())
}
