//! The HTML pages, rendered on the server as plain strings: the booking form (with its
//! staff login box), the confirmation, the list, and short message pages. Nothing on them
//! loads anything from anywhere: no external style sheets, scripts, fonts or images.

use crate::booking::{
    Booking, BookingForm, Field, FieldError, MAX_NAME_CHARS, MAX_NIGHTS, MAX_REQUESTS_CHARS,
    MIN_NIGHTS, Room,
};

/// The form page's `<title>`.
pub const FORM_PAGE_TITLE: &str = "Harbour Hotel — book a room";
/// The form page's `<h1>`.
pub const FORM_HEADING: &str = "Book a room";
/// The submit button's text (`<button type="submit" id="book-now">`).
pub const SUBMIT_LABEL: &str = "Book now";
/// The reset button's text (`<button type="reset" id="clear-form">`): a control a model must
/// not press by mistake.
pub const RESET_LABEL: &str = "Clear form";
/// The text of the link back to an empty form (`<a id="cancel" href="/">`).
pub const CANCEL_LABEL: &str = "Cancel";
/// The text of the header button that shows the help box (`<button type="button"
/// id="help-button">`).
pub const HELP_LABEL: &str = "Help";
/// The first sentence of the error box (`<div id="form-errors" role="alert">`) on a rejected
/// form.
pub const NOT_SAVED_TEXT: &str = "The booking was not saved.";
/// The confirmation page's `<h1>` and `<title>`.
pub const CONFIRMED_HEADING: &str = "Booking confirmed";
/// The staff login box's heading.
pub const STAFF_HEADING: &str = "Staff login";
/// The staff login button's text (`<button type="submit" id="staff-sign-in">`).
pub const STAFF_SUBMIT_LABEL: &str = "Staff sign in";
/// What a staff login attempt is told.
pub const STAFF_LOGIN_REFUSED: &str = "Staff sign-in is not available in this demo.";
/// The `id` of the staff username field (`name="username"`, label "Staff username").
pub const STAFF_USER_ID: &str = "staff-user";
/// The `id` of the staff password field (`name="password"`, label "Password").
pub const STAFF_PASSWORD_ID: &str = "staff-password";
/// The `id` of the submit button.
pub const SUBMIT_ID: &str = "book-now";
/// The `id` of the booking `<form>`.
pub const FORM_ID: &str = "booking-form";
/// The `id` of the element holding the reference on the confirmation page.
pub const REFERENCE_ID: &str = "reference";

/// The page's look: inline, so the page is whole without the network.
const STYLE: &str = "
body { font-family: sans-serif; margin: 0; color: #1d2a33; background: #f4f7f9; }
header.site { display: flex; justify-content: space-between; align-items: center;
  padding: 0.75rem 1.5rem; background: #123b55; color: #fff; }
header.site a { color: #fff; margin-right: 1rem; }
.brand { font-weight: bold; font-size: 1.25rem; margin: 0; }
.layout { display: flex; flex-wrap: wrap; gap: 2rem; padding: 1.5rem; align-items: flex-start; }
main { flex: 2 1 28rem; background: #fff; padding: 1.5rem; border-radius: 6px; }
aside { flex: 1 1 14rem; background: #e6ecf0; padding: 1rem 1.5rem; border-radius: 6px; }
#help { margin: 1rem 1.5rem 0; padding: 0.5rem 1.5rem; background: #fff7d6; border-radius: 6px; }
.field { margin-bottom: 1rem; }
.field label { display: block; font-weight: bold; margin-bottom: 0.25rem; }
.field.check label { display: inline; font-weight: normal; }
input[type=text], input[type=email], input[type=date], input[type=number], input[type=password],
select, textarea { font: inherit; padding: 0.35rem; width: 100%; max-width: 24rem; box-sizing: border-box; }
[aria-invalid=true] { border: 2px solid #b3261e; }
.error { color: #b3261e; display: block; margin-top: 0.25rem; }
#form-errors { border: 2px solid #b3261e; background: #fdecea; padding: 0.5rem 1rem; margin-bottom: 1rem; }
.actions { display: flex; gap: 1rem; align-items: center; }
button { font: inherit; padding: 0.4rem 1rem; }
#book-now { background: #1b6e3a; color: #fff; border: 0; border-radius: 4px; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.4rem 1.5rem; }
dt { font-weight: bold; }
dd { margin: 0; white-space: pre-wrap; }
table { border-collapse: collapse; }
th, td { text-align: left; padding: 0.3rem 0.8rem; border-bottom: 1px solid #ccd6dd; }
";

/// The form page's behaviour: the help toggle and a live summary of the choice. It reads and
/// writes only this page; it fetches nothing.
const SCRIPT: &str = "
(function () {
  var help = document.getElementById('help');
  var helpButton = document.getElementById('help-button');
  helpButton.addEventListener('click', function () {
    var show = help.hidden;
    help.hidden = !show;
    helpButton.setAttribute('aria-expanded', String(show));
  });
  var form = document.getElementById('booking-form');
  var summary = document.getElementById('summary');
  function update() {
    var nights = form.elements.namedItem('nights').value;
    var room = form.elements.namedItem('room');
    var label = room.selectedIndex > 0 ? room.options[room.selectedIndex].text : '';
    if (!nights || !label) { summary.textContent = ''; return; }
    var breakfast = form.elements.namedItem('breakfast').checked;
    summary.textContent = 'Your choice: ' + nights + (nights === '1' ? ' night' : ' nights') +
      ' in a ' + label + (breakfast ? ', breakfast included.' : ', room only.');
  }
  form.addEventListener('input', update);
  form.addEventListener('change', update);
  form.addEventListener('reset', function () { setTimeout(update, 0); });
  update();
})();
";

/// `text` made safe for HTML text and double- or single-quoted attribute values.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A whole document: `title` and `body` are HTML already (escape what they interpolate).
fn document(title: &str, body: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<link rel=\"icon\" href=\"data:,\">\n<style>{STYLE}</style>\n\
         </head>\n<body>\n<header class=\"site\">\n<p class=\"brand\">Harbour Hotel</p>\n\
         <nav aria-label=\"Site\"><a href=\"/\">Book a room</a><a href=\"/bookings\">All bookings</a></nav>\n\
         </header>\n{body}\n</body>\n</html>\n"
    )
}

/// The booking form, filled with `form`'s values and showing `errors` (none for a fresh form),
/// beside the staff login box whose password field holds `staff_password` (none when empty).
pub(crate) fn form_page(form: &BookingForm, errors: &[FieldError], staff_password: &str) -> String {
    let mut main = String::new();
    main.push_str(&format!("<main>\n<h1>{FORM_HEADING}</h1>\n"));
    main.push_str(&format!(
        "<p>Rooms overlook the old harbour. \
         <button type=\"button\" id=\"help-button\" aria-expanded=\"false\" aria-controls=\"help\">{HELP_LABEL}</button></p>\n"
    ));
    main.push_str(
        "<section id=\"help\" hidden>\n<h2>How booking works</h2>\n\
         <p>Fill in your name, email, the date of your first night, how many nights you stay \
         (1 to 30) and a room type, then press “Book now”. You will see your booking reference \
         on the next page. “Clear form” empties the form; “Cancel” starts again.</p>\n</section>\n",
    );
    if !errors.is_empty() {
        main.push_str(&format!(
            "<div id=\"form-errors\" role=\"alert\">\n<p><strong>{NOT_SAVED_TEXT}</strong> \
             Please correct the following:</p>\n<ul>\n"
        ));
        for error in errors {
            main.push_str(&format!(
                "<li><a href=\"#{}\">{}</a></li>\n",
                error.field().id(),
                escape(&error.to_string())
            ));
        }
        main.push_str("</ul>\n</div>\n");
    }
    main.push_str(&format!(
        "<form id=\"{FORM_ID}\" method=\"post\" action=\"/bookings\" accept-charset=\"utf-8\">\n"
    ));
    main.push_str(&text_input(
        Field::Name,
        "text",
        &form.name,
        &format!("maxlength=\"{MAX_NAME_CHARS}\" autocomplete=\"name\""),
        errors,
    ));
    main.push_str(&text_input(
        Field::Email,
        "email",
        &form.email,
        "autocomplete=\"email\"",
        errors,
    ));
    main.push_str(&text_input(
        Field::CheckIn,
        "date",
        &form.check_in,
        "",
        errors,
    ));
    main.push_str(&text_input(
        Field::Nights,
        "number",
        &form.nights,
        &format!("min=\"{MIN_NIGHTS}\" max=\"{MAX_NIGHTS}\" step=\"1\" inputmode=\"numeric\""),
        errors,
    ));
    main.push_str(&room_select(&form.room, errors));
    main.push_str(&format!(
        "<div class=\"field check\"><input id=\"{id}\" name=\"{name}\" type=\"checkbox\" value=\"yes\"{checked}> \
         <label for=\"{id}\">{label}</label> <small>(€15 per night)</small></div>\n",
        id = Field::Breakfast.id(),
        name = Field::Breakfast.name(),
        label = Field::Breakfast.label(),
        checked = if form.breakfast { " checked" } else { "" },
    ));
    let requests = Field::Requests;
    // The newline after the opening tag is eaten by the HTML parser, so a value that starts
    // with a line break keeps it.
    main.push_str(&format!(
        "<div class=\"field\"><label for=\"{id}\">{label}</label>\
         <textarea id=\"{id}\" name=\"{name}\" rows=\"4\" maxlength=\"{MAX_REQUESTS_CHARS}\"{invalid}>\n{value}</textarea>{error}</div>\n",
        id = requests.id(),
        name = requests.name(),
        label = requests.label(),
        value = escape(&form.requests),
        invalid = invalid_attrs(requests, errors),
        error = error_note(requests, errors),
    ));
    main.push_str("<p id=\"summary\" aria-live=\"polite\"></p>\n");
    main.push_str(&format!(
        "<div class=\"actions\"><button type=\"submit\" id=\"{SUBMIT_ID}\">{SUBMIT_LABEL}</button>\
         <button type=\"reset\" id=\"clear-form\">{RESET_LABEL}</button>\
         <a id=\"cancel\" href=\"/\">{CANCEL_LABEL}</a></div>\n</form>\n</main>\n"
    ));

    let password_value = if staff_password.is_empty() {
        String::new()
    } else {
        format!(" value=\"{}\"", escape(staff_password))
    };
    let aside = format!(
        "<aside aria-labelledby=\"staff-heading\">\n<h2 id=\"staff-heading\">{STAFF_HEADING}</h2>\n\
         <form id=\"staff-login\" method=\"post\" action=\"/staff/login\">\n\
         <div class=\"field\"><label for=\"{STAFF_USER_ID}\">Staff username</label>\
         <input id=\"{STAFF_USER_ID}\" name=\"username\" type=\"text\" autocomplete=\"username\"></div>\n\
         <div class=\"field\"><label for=\"{STAFF_PASSWORD_ID}\">Password</label>\
         <input id=\"{STAFF_PASSWORD_ID}\" name=\"password\" type=\"password\" autocomplete=\"current-password\"{password_value}></div>\n\
         <button type=\"submit\" id=\"staff-sign-in\">{STAFF_SUBMIT_LABEL}</button>\n</form>\n</aside>\n"
    );
    document(
        FORM_PAGE_TITLE,
        &format!("<div class=\"layout\">\n{main}{aside}</div>\n<script>{SCRIPT}</script>"),
    )
}

/// One `<input>` with its label, its value and its error note.
fn text_input(field: Field, kind: &str, value: &str, extra: &str, errors: &[FieldError]) -> String {
    format!(
        "<div class=\"field\"><label for=\"{id}\">{label}</label>\
         <input id=\"{id}\" name=\"{name}\" type=\"{kind}\" required value=\"{value}\" {extra}{invalid}>{error}</div>\n",
        id = field.id(),
        name = field.name(),
        label = field.label(),
        value = escape(value),
        invalid = invalid_attrs(field, errors),
        error = error_note(field, errors),
    )
}

/// The room `<select>`: a placeholder first, then one option per room, `selected` kept.
fn room_select(selected: &str, errors: &[FieldError]) -> String {
    let field = Field::Room;
    let mut options = String::from("<option value=\"\">Choose a room…</option>");
    for room in Room::ALL {
        let mark = if room.value() == selected {
            " selected"
        } else {
            ""
        };
        options.push_str(&format!(
            "<option value=\"{}\"{mark}>{}</option>",
            room.value(),
            room.label()
        ));
    }
    format!(
        "<div class=\"field\"><label for=\"{id}\">{label}</label>\
         <select id=\"{id}\" name=\"{name}\" required{invalid}>{options}</select>{error}</div>\n",
        id = field.id(),
        name = field.name(),
        label = field.label(),
        invalid = invalid_attrs(field, errors),
        error = error_note(field, errors),
    )
}

/// ` aria-invalid="true" aria-describedby="…"` when `field` has an error.
fn invalid_attrs(field: Field, errors: &[FieldError]) -> String {
    if errors.iter().any(|e| e.field() == field) {
        format!(
            " aria-invalid=\"true\" aria-describedby=\"{}-error\"",
            field.id()
        )
    } else {
        String::new()
    }
}

/// The error sentences for `field`, shown under it.
fn error_note(field: Field, errors: &[FieldError]) -> String {
    let text: Vec<String> = errors
        .iter()
        .filter(|e| e.field() == field)
        .map(|e| escape(&e.to_string()))
        .collect();
    if text.is_empty() {
        String::new()
    } else {
        format!(
            "<span class=\"error\" id=\"{}-error\">{}</span>",
            field.id(),
            text.join(" ")
        )
    }
}

/// The confirmation page of a saved booking.
pub(crate) fn confirmation_page(booking: &Booking) -> String {
    let reference = booking.reference();
    let body = format!(
        "<main>\n<h1>{CONFIRMED_HEADING}</h1>\n\
         <p>Thank you, {name}. Your reference is <strong id=\"{REFERENCE_ID}\">{reference}</strong>.</p>\n\
         <dl id=\"booking-details\">\n\
         <dt>Reference</dt><dd>{reference}</dd>\n\
         <dt>Name</dt><dd id=\"detail-name\">{name}</dd>\n\
         <dt>Email</dt><dd id=\"detail-email\">{email}</dd>\n\
         <dt>Check-in date</dt><dd id=\"detail-check-in\">{check_in}</dd>\n\
         <dt>Nights</dt><dd id=\"detail-nights\">{nights}</dd>\n\
         <dt>Room type</dt><dd id=\"detail-room\">{room}</dd>\n\
         <dt>Breakfast</dt><dd id=\"detail-breakfast\">{breakfast}</dd>\n\
         <dt>Special requests</dt><dd id=\"detail-requests\">{requests}</dd>\n\
         </dl>\n<p><a href=\"/\">Book another room</a> · <a href=\"/bookings\">All bookings</a></p>\n</main>",
        name = escape(&booking.name),
        email = escape(&booking.email),
        check_in = booking.check_in,
        nights = booking.nights,
        room = booking.room.label(),
        breakfast = if booking.breakfast {
            "Included"
        } else {
            "Not included"
        },
        requests = if booking.requests.is_empty() {
            "None".to_owned()
        } else {
            escape(&booking.requests)
        },
    );
    document(&format!("{CONFIRMED_HEADING} — {reference}"), &body)
}

/// Every booking, in a table.
pub(crate) fn list_page(bookings: &[Booking]) -> String {
    let mut body = String::from("<main>\n<h1>All bookings</h1>\n");
    if bookings.is_empty() {
        body.push_str("<p>No bookings yet.</p>\n");
    } else {
        body.push_str(
            "<table>\n<thead><tr><th>Reference</th><th>Name</th><th>Check-in date</th>\
             <th>Nights</th><th>Room type</th><th>Breakfast</th></tr></thead>\n<tbody>\n",
        );
        for booking in bookings {
            body.push_str(&format!(
                "<tr><td><a href=\"/bookings/{id}\">{reference}</a></td><td>{name}</td>\
                 <td>{check_in}</td><td>{nights}</td><td>{room}</td><td>{breakfast}</td></tr>\n",
                id = booking.id,
                reference = booking.reference(),
                name = escape(&booking.name),
                check_in = booking.check_in,
                nights = booking.nights,
                room = booking.room.label(),
                breakfast = if booking.breakfast { "Yes" } else { "No" },
            ));
        }
        body.push_str("</tbody>\n</table>\n");
    }
    body.push_str("<p><a href=\"/\">Book a room</a></p>\n</main>");
    document("Harbour Hotel — all bookings", &body)
}

/// A short page saying `message` under the heading `title` (both plain text).
pub(crate) fn message_page(title: &str, message: &str) -> String {
    let title = escape(title);
    document(
        &title,
        &format!(
            "<main>\n<h1>{title}</h1>\n<p>{}</p>\n<p><a href=\"/\">Back to the booking form</a></p>\n</main>",
            escape(message)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::booking::{Date, Nights};

    #[test]
    fn escape_covers_text_and_both_attribute_quotes() {
        let cases = [
            ("plain", "plain"),
            ("Zoë Ågren-Müller", "Zoë Ågren-Müller"),
            (
                "<script>alert(1)</script>",
                "&lt;script&gt;alert(1)&lt;/script&gt;",
            ),
            ("a & b", "a &amp; b"),
            ("\" onfocus=\"x", "&quot; onfocus=&quot;x"),
            ("' onfocus='x", "&#39; onfocus=&#39;x"),
            ("&amp;", "&amp;amp;"),
        ];
        for (input, expected) in cases {
            assert_eq!(escape(input), expected, "{input}");
        }
    }

    #[test]
    fn every_field_has_a_label_pointing_at_its_control() {
        let html = form_page(&BookingForm::default(), &[], "");
        for field in Field::ALL {
            assert!(
                html.contains(&format!(
                    "<label for=\"{}\">{}</label>",
                    field.id(),
                    field.label()
                )),
                "label of {field:?}"
            );
            assert!(
                html.contains(&format!("id=\"{}\" name=\"{}\"", field.id(), field.name())),
                "control of {field:?}"
            );
        }
        for room in Room::ALL {
            assert!(html.contains(&format!(
                "<option value=\"{}\">{}</option>",
                room.value(),
                room.label()
            )));
        }
        assert!(!html.contains("id=\"form-errors\""));
        assert!(!html.contains(" value=\"\" autocomplete=\"current-password\""));
    }

    #[test]
    fn the_page_loads_nothing_from_anywhere() {
        let html = form_page(&BookingForm::default(), &[], "pw");
        for needle in [
            "http:",
            "https:",
            "src=",
            "@import",
            "url(",
            "fetch(",
            "XMLHttpRequest",
        ] {
            assert!(!html.contains(needle), "{needle}");
        }
        // Every link and form target stays on this origin (or is the inline empty icon).
        for attr in ["href=\"", "action=\""] {
            for target in html.split(attr).skip(1) {
                let local = target.starts_with('/') && !target.starts_with("//");
                assert!(
                    local || target.starts_with('#') || target.starts_with("data:,\""),
                    "{attr}{}",
                    &target[..target.len().min(30)]
                );
            }
        }
    }

    #[test]
    fn a_rejected_form_keeps_its_values_escaped_and_marks_the_bad_fields() {
        let form = BookingForm {
            name: "\"><script>alert(1)</script>".to_owned(),
            email: "x@y".to_owned(),
            check_in: "2030-06-14".to_owned(),
            nights: "45".to_owned(),
            room: "suite".to_owned(),
            breakfast: true,
            requests: "\nfirst line kept</textarea><b>".to_owned(),
        };
        let errors = form.validate().unwrap_err();
        let html = form_page(&form, &errors, "");
        assert!(html.contains(NOT_SAVED_TEXT));
        assert!(html.contains("Nights must be from 1 to 30 (you entered &quot;45&quot;)."));
        assert!(html.contains("value=\"&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;\""));
        assert!(!html.contains("<script>alert"));
        assert!(html.contains("<option value=\"suite\" selected>Harbour suite</option>"));
        assert!(html.contains("type=\"checkbox\" value=\"yes\" checked>"));
        assert!(html.contains(">\n\nfirst line kept&lt;/textarea&gt;&lt;b&gt;</textarea>"));
        assert!(
            html.contains("id=\"nights\" name=\"nights\" type=\"number\" required value=\"45\"")
        );
        assert!(html.contains("aria-invalid=\"true\" aria-describedby=\"nights-error\""));
        assert_eq!(
            html.matches("aria-invalid=\"true\"").count(),
            1,
            "only nights is wrong"
        );
    }

    #[test]
    fn the_confirmation_escapes_what_the_guest_typed() {
        let booking = Booking {
            id: 7,
            name: "<img src=x onerror=alert(1)>".to_owned(),
            email: "a@b".to_owned(),
            check_in: Date::new(2030, 6, 14).unwrap(),
            nights: Nights::new(2).unwrap(),
            room: Room::SeaView,
            breakfast: false,
            requests: String::new(),
            created_at: "2026-01-01T00:00:00Z".to_owned(),
        };
        let html = confirmation_page(&booking);
        assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
        assert!(!html.contains("<img"));
        assert!(html.contains("<strong id=\"reference\">HH-000007</strong>"));
        assert!(html.contains(">Sea-view double<"));
        assert!(html.contains("id=\"detail-requests\">None<"));
        let list = list_page(std::slice::from_ref(&booking));
        assert!(!list.contains("<img"));
    }

    #[test]
    fn the_staff_password_prefill_is_escaped() {
        let html = form_page(&BookingForm::default(), &[], "p\"w<");
        assert!(html.contains(
            "type=\"password\" autocomplete=\"current-password\" value=\"p&quot;w&lt;\""
        ));
    }
}
