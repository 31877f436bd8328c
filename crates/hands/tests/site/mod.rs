//! A loopback site for the tests that drive a real browser at a page of their own: one thread
//! answers each request with the HTML `page` gives for its path.

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpListener;

/// Serves `page(path)` (UTF-8 HTML) on 127.0.0.1; the site's root URL, ending in `/`.
pub fn serve(page: impl Fn(&str) -> String + Send + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://127.0.0.1:{}/",
        listener.local_addr().unwrap().port()
    );
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut first = String::new();
            let _ = reader.read_line(&mut first);
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let path = first.split(' ').nth(1).unwrap_or("/");
            let body = page(path);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    url
}
