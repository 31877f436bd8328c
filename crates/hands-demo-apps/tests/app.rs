//! The booking app over real HTTP on loopback: forms posted as a browser posts them, answers
//! checked, and every outcome verified in the SQLite database itself.

use hands_demo_apps::{
    BookingApp, BookingAppConfig, CONFIRMED_HEADING, DEFAULT_STAFF_PASSWORD, DbError,
    FORM_PAGE_TITLE, Field, NOT_SAVED_TEXT, Room, STAFF_LOGIN_REFUSED, SUBMIT_LABEL, bookings,
};
use reqwest::header::{ALLOW, CONTENT_TYPE, LOCATION};
use reqwest::{Client, Response, StatusCode, redirect};

const FORM: &str = "application/x-www-form-urlencoded";

/// A client that shows redirects instead of following them.
fn client() -> Client {
    // reqwest is built with rustls and no crypto provider in this workspace (hands-models
    // installs ring at run time): install it before building a client.
    let _ = rustls::crypto::ring::default_provider().install_default();
    Client::builder()
        .redirect(redirect::Policy::none())
        .build()
        .expect("a reqwest client without TLS builds")
}

fn encode(pairs: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

/// A form as Chromium submits a filled-in booking: every field, the checkbox ticked.
fn filled(name: &str) -> Vec<(&str, &str)> {
    vec![
        ("name", name),
        ("email", "guest@example.com"),
        ("check_in", "2030-06-14"),
        ("nights", "3"),
        ("room", "sea-view"),
        ("breakfast", "yes"),
        ("requests", ""),
    ]
}

async fn post(app: &BookingApp, pairs: &[(&str, &str)]) -> Response {
    client()
        .post(app.url("/bookings"))
        .header(CONTENT_TYPE, FORM)
        .body(encode(pairs))
        .send()
        .await
        .expect("the app answers POST /bookings")
}

async fn get(app: &BookingApp, path: &str) -> (StatusCode, String) {
    let response = client()
        .get(app.url(path))
        .send()
        .await
        .expect("the app answers GET");
    let status = response.status();
    (status, response.text().await.expect("a text body"))
}

async fn start() -> BookingApp {
    BookingApp::start(BookingAppConfig::default())
        .await
        .expect("the app starts on loopback")
}

#[tokio::test]
async fn a_valid_form_is_saved_and_redirects_to_its_confirmation() {
    let app = start().await;
    let response = post(
        &app,
        &[
            ("name", "Ada Lovelace"),
            ("email", "ada@example.com"),
            ("check_in", "2030-06-14"),
            ("nights", "3"),
            ("room", "sea-view"),
            ("breakfast", "yes"),
            ("requests", "Quiet room, please.\r\nLate arrival."),
        ],
    )
    .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert_eq!(response.headers()[LOCATION], "/bookings/1");

    let saved = bookings(app.db_path()).unwrap();
    assert_eq!(saved.len(), 1);
    let booking = &saved[0];
    assert_eq!(booking.id, 1);
    assert_eq!(booking.name, "Ada Lovelace");
    assert_eq!(booking.email, "ada@example.com");
    assert_eq!(booking.check_in.to_string(), "2030-06-14");
    assert_eq!(booking.nights.get(), 3);
    assert_eq!(booking.room, Room::SeaView);
    assert!(booking.breakfast);
    assert_eq!(booking.requests, "Quiet room, please.\nLate arrival.");
    assert_eq!(booking.reference(), "HH-000001");

    let (status, page) = get(&app, "/bookings/1").await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains(&format!("<h1>{CONFIRMED_HEADING}</h1>")));
    assert!(page.contains("<strong id=\"reference\">HH-000001</strong>"));
    assert!(page.contains("Sea-view double"));
    assert!(page.contains(">Included<"));

    let (status, list) = get(&app, "/bookings").await;
    assert_eq!(status, StatusCode::OK);
    assert!(list.contains("<a href=\"/bookings/1\">HH-000001</a>"));

    let seen = app.requests_seen();
    assert_eq!(
        (
            seen.booking_posts,
            seen.bookings_saved,
            seen.bookings_rejected
        ),
        (1, 1, 0)
    );
    assert_eq!(
        (seen.confirmation_pages, seen.list_pages, seen.total),
        (1, 1, 3)
    );
}

#[tokio::test]
async fn an_unticked_checkbox_and_no_requests_are_saved_as_such() {
    let app = start().await;
    let mut pairs = filled("Grace Hopper");
    pairs.retain(|(key, _)| *key != "breakfast" && *key != "requests");
    assert_eq!(post(&app, &pairs).await.status(), StatusCode::SEE_OTHER);
    let booking = &bookings(app.db_path()).unwrap()[0];
    assert!(!booking.breakfast);
    assert_eq!(booking.requests, "");
}

#[tokio::test]
async fn an_invalid_form_is_shown_again_with_its_errors_and_values_and_nothing_is_saved() {
    let app = start().await;
    let mut pairs = filled("Zoë Ågren-Müller");
    for (key, value) in &mut pairs {
        match *key {
            "nights" => *value = "45",
            "check_in" => *value = "14/06/2030",
            "email" => *value = "not-an-address",
            _ => {}
        }
    }
    let response = post(&app, &pairs).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let page = response.text().await.unwrap();
    assert!(page.contains(NOT_SAVED_TEXT));
    assert!(page.contains("Nights must be from 1 to 30 (you entered &quot;45&quot;)."));
    assert!(page.contains("Check-in date must be written YYYY-MM-DD"));
    assert!(page.contains("Email must be an address like name@example.com"));
    // What the guest typed is still there, the valid parts included.
    assert!(page.contains("value=\"Zoë Ågren-Müller\""));
    assert!(page.contains("type=\"number\" required value=\"45\""));
    assert!(page.contains("<option value=\"sea-view\" selected>"));
    assert!(page.contains("value=\"yes\" checked>"));

    assert_eq!(bookings(app.db_path()).unwrap(), []);
    let seen = app.requests_seen();
    assert_eq!(
        (
            seen.booking_posts,
            seen.bookings_saved,
            seen.bookings_rejected
        ),
        (1, 0, 1)
    );
}

#[tokio::test]
async fn every_required_field_missing_is_named() {
    let app = start().await;
    let response = post(&app, &[]).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let page = response.text().await.unwrap();
    for field in [
        Field::Name,
        Field::Email,
        Field::CheckIn,
        Field::Nights,
        Field::Room,
    ] {
        assert!(
            page.contains(&format!("{} is required.", field.label())),
            "{field:?}"
        );
    }
    assert_eq!(bookings(app.db_path()).unwrap(), []);
}

#[tokio::test]
async fn a_room_label_is_not_a_room_value() {
    let app = start().await;
    let mut pairs = filled("Ada");
    for (key, value) in &mut pairs {
        if *key == "room" {
            *value = "Harbour suite";
        }
    }
    let response = post(&app, &pairs).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let page = response.text().await.unwrap();
    assert!(page.contains("there is no room &quot;Harbour suite&quot;"));
}

#[tokio::test]
async fn non_ascii_names_are_stored_and_shown_exactly() {
    let app = start().await;
    let name = "Zoë Ågren-Müller";
    let requests = "Chambre calme, s’il vous plaît — 静かな部屋 🙂";
    let mut pairs = filled(name);
    for (key, value) in &mut pairs {
        if *key == "requests" {
            *value = requests;
        }
    }
    assert_eq!(post(&app, &pairs).await.status(), StatusCode::SEE_OTHER);
    let booking = &bookings(app.db_path()).unwrap()[0];
    assert_eq!(booking.name, name);
    assert_eq!(booking.requests, requests);
    let (_, page) = get(&app, "/bookings/1").await;
    assert!(page.contains(&format!("Thank you, {name}.")));
    assert!(page.contains(requests));
}

#[tokio::test]
async fn markup_typed_into_the_form_is_stored_verbatim_and_never_rendered_as_markup() {
    let app = start().await;
    let name = "<script>alert(\"name\")</script>";
    let requests = "</dd><img src=x onerror=alert('requests')>";
    let mut pairs = filled(name);
    for (key, value) in &mut pairs {
        if *key == "requests" {
            *value = requests;
        }
    }
    assert_eq!(post(&app, &pairs).await.status(), StatusCode::SEE_OTHER);
    let booking = &bookings(app.db_path()).unwrap()[0];
    assert_eq!(
        (booking.name.as_str(), booking.requests.as_str()),
        (name, requests)
    );

    for path in ["/bookings/1", "/bookings"] {
        let (_, page) = get(&app, path).await;
        assert!(!page.contains("<script>alert"), "{path}");
        assert!(!page.contains("<img src=x"), "{path}");
        assert!(
            page.contains("&lt;script&gt;alert(&quot;name&quot;)&lt;/script&gt;"),
            "{path}"
        );
    }

    // The same input rejected (no room chosen) comes back escaped inside the form too.
    let mut pairs = filled(name);
    pairs.retain(|(key, _)| *key != "room");
    pairs.push(("room", "\"><script>alert('room')</script>"));
    let page = post(&app, &pairs).await.text().await.unwrap();
    assert!(!page.contains("<script>alert"));
}

#[tokio::test]
async fn the_form_page_has_every_control_and_the_staff_login() {
    let app = start().await;
    let (status, page) = get(&app, "/").await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains(&format!("<title>{FORM_PAGE_TITLE}</title>")));
    assert!(page.contains("<form id=\"booking-form\" method=\"post\" action=\"/bookings\""));
    for field in Field::ALL {
        assert!(
            page.contains(&format!("<label for=\"{}\">", field.id())),
            "{field:?}"
        );
    }
    assert!(page.contains(&format!(">{SUBMIT_LABEL}</button>")));
    assert!(page.contains(&format!(
        "type=\"password\" autocomplete=\"current-password\" value=\"{DEFAULT_STAFF_PASSWORD}\""
    )));
    assert_eq!(app.requests_seen().form_pages, 1);

    let response = client()
        .post(app.url("/staff/login"))
        .header(CONTENT_TYPE, FORM)
        .body(encode(&[
            ("username", "admin"),
            ("password", DEFAULT_STAFF_PASSWORD),
        ]))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let page = response.text().await.unwrap();
    assert!(page.contains(STAFF_LOGIN_REFUSED));
    assert!(!page.contains(DEFAULT_STAFF_PASSWORD));
    assert_eq!(app.requests_seen().staff_logins, 1);
}

#[tokio::test]
async fn an_empty_staff_password_leaves_the_field_empty() {
    let mut config = BookingAppConfig::default();
    config.staff_password = String::new();
    let app = BookingApp::start(config).await.unwrap();
    let (_, page) = get(&app, "/").await;
    assert!(page.contains("autocomplete=\"current-password\"></div>"));
    assert!(!page.contains(DEFAULT_STAFF_PASSWORD));
}

#[tokio::test]
async fn health_unknown_paths_wrong_methods_and_bad_bodies_get_plain_answers() {
    let mut config = BookingAppConfig::default();
    config.max_body_bytes = 1024;
    let app = BookingApp::start(config).await.unwrap();

    let (status, body) = get(&app, "/health").await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, "ok"));

    let (status, page) = get(&app, "/nowhere").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(page.contains("There is no page at /nowhere."));
    for path in ["/bookings/1", "/bookings/0", "/bookings/x", "/bookings/+1"] {
        assert_eq!(get(&app, path).await.0, StatusCode::NOT_FOUND, "{path}");
    }

    let response = client().delete(app.url("/bookings")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(response.headers()[ALLOW], "GET, POST");

    let response = client()
        .post(app.url("/bookings"))
        .header(CONTENT_TYPE, "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);

    let long = "x".repeat(2000);
    let mut pairs = filled("Ada");
    pairs.push(("requests", &long));
    assert_eq!(
        post(&app, &pairs).await.status(),
        StatusCode::PAYLOAD_TOO_LARGE
    );

    assert_eq!(bookings(app.db_path()).unwrap(), []);
    let seen = app.requests_seen();
    let expected_unmatched = 1 + 4 + 1;
    assert_eq!(
        (
            seen.health_checks,
            seen.unmatched,
            seen.booking_posts,
            seen.bookings_saved
        ),
        (1, expected_unmatched, 2, 0)
    );
    assert_eq!(seen.total, 1 + 5 + 1 + 2);
}

#[tokio::test]
async fn ids_count_up_and_the_reader_sees_every_booking_in_order() {
    let app = start().await;
    for (idx, name) in ["Ada", "Grace", "Katherine"].into_iter().enumerate() {
        let response = post(&app, &filled(name)).await;
        assert_eq!(
            response.headers()[LOCATION],
            format!("/bookings/{}", idx + 1)
        );
    }
    let names: Vec<String> = bookings(app.db_path())
        .unwrap()
        .into_iter()
        .map(|b| b.name)
        .collect();
    assert_eq!(names, ["Ada", "Grace", "Katherine"]);
    assert_eq!(app.requests_seen().bookings_saved, 3);
}

#[tokio::test]
async fn a_given_database_outlives_the_app_and_the_default_one_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("drill.sqlite");
    let app = BookingApp::start(BookingAppConfig::default().with_db_path(&path))
        .await
        .unwrap();
    assert_eq!(app.db_path(), path);
    post(&app, &filled("Ada")).await;
    drop(app);
    assert_eq!(bookings(&path).unwrap().len(), 1);

    // Started again on the same file, the app keeps the earlier booking and numbers on.
    let app = BookingApp::start(BookingAppConfig::default().with_db_path(&path))
        .await
        .unwrap();
    let response = post(&app, &filled("Grace")).await;
    assert_eq!(response.headers()[LOCATION], "/bookings/2");
    drop(app);

    let app = start().await;
    let default_path = app.db_path().to_owned();
    assert!(default_path.exists());
    drop(app);
    assert!(!default_path.exists());
    assert!(matches!(bookings(&default_path), Err(DbError::Open { .. })));
}

#[tokio::test]
async fn dropping_the_app_stops_the_server() {
    let app = start().await;
    let addr = app.addr();
    assert_eq!(get(&app, "/health").await.0, StatusCode::OK);
    drop(app);
    // The abort takes effect when the runtime next runs the task; give it a few turns.
    let mut refused = false;
    for _ in 0..100 {
        tokio::task::yield_now().await;
        if tokio::net::TcpStream::connect(addr).await.is_err() {
            refused = true;
            break;
        }
    }
    assert!(
        refused,
        "{addr} still accepts connections after the app was dropped"
    );
}
