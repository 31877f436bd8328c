"""Fixtures of the Python tests: real Xvfb desktops with real X clients, a real Chromium, the
booking app, and the API stand-in — nothing is simulated but the model."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator, Tuple

import pytest

import hands.sync
from hands import testing

sys.path.insert(0, str(Path(__file__).parent))

from policies import BookingTask, NoteTask  # noqa: E402

#: The drill's screen; the editor opens centred.
SCREEN = (1280, 800)

#: The key the tests send: the stand-in wants one, as the real APIs do.
API_KEY = "sk-hands-python-tests-offline"

#: A page with one file input ("Attachment") that writes the chosen file's name and size.
UPLOAD_PAGE = ("data:text/html,<input type=file id=f aria-label='Attachment'><p id=o></p>"
               "<script>f.onchange=()=>o.textContent=f.files[0].name+':'+f.files[0].size</script>")


def pytest_configure(config: pytest.Config) -> None:
    if not testing.available:
        raise pytest.UsageError(
            "the installed hands has no test support: build it with `maturin develop --features testing`"
        )


@pytest.fixture
def note_desktop() -> Iterator[Tuple[hands.sync.Desktop, NoteTask]]:
    """A spawned (jailed) desktop with a window manager and mousepad on screen, and the note
    task: the note is saved in the jail's home, which the test reads on the host."""
    desktop = hands.sync.Desktop.spawn(*SCREEN)
    assert desktop.home_dir is not None
    try:
        desktop.launch("openbox")
        assert desktop.wait_for_window_manager(20.0), "openbox managed nothing within 20 s"
        # mousepad sometimes creates its first window and never maps it (about one start in
        # ten, idle): started again, it shows it (as hands' own desktop drill does).
        for _ in range(3):
            editor = desktop.launch("mousepad", "--disable-server")
            if desktop.wait_for_window(5.0):
                break
            editor.kill()
        else:
            raise AssertionError("mousepad showed no window in three starts of 5 s")
        task = NoteTask(
            note="Drill note from hands: ünïcödé ✓, tabs\tand a second line.\nSecond line.",
            path="/home/user/note.txt",
            editor_point=(SCREEN[0] // 2, SCREEN[1] // 2 + 20),
            host_path=str(Path(desktop.home_dir) / "note.txt"),
        )
        yield desktop, task
    finally:
        desktop.close()


def saved_note(task: NoteTask) -> str:
    """The note on disk (editors may end the file with a newline)."""
    return Path(task.host_path).read_text(encoding="utf-8").rstrip("\n")


BOOKING = BookingTask(name="Zoë Ågren-Müller", email="zoe@example.test", check_in="2027-03-14",
                      nights=3, room="sea-view", breakfast=True)


@pytest.fixture
def booking_app() -> Iterator[testing.BookingApp]:
    app = testing.BookingApp()
    try:
        yield app
    finally:
        app.close()


@pytest.fixture
def booking_browser(booking_app: testing.BookingApp) -> Iterator[hands.sync.Browser]:
    """Chromium allowed only the booking app's origin, on its start page."""
    browser = hands.sync.Browser.launch(allow=[booking_app.base_url])
    try:
        browser.navigate(booking_app.base_url + "/")
        yield browser
    finally:
        browser.close()


def assert_booked(app: testing.BookingApp, sim: testing.Sim, task: BookingTask = BOOKING) -> None:
    """The booking is in the database as asked, from a real form post, and the staff password
    never reached the model."""
    assert app.bookings_saved == 1
    [row] = app.bookings()
    assert (row["name"], row["email"], row["check_in"], row["nights"], row["room"], row["breakfast"]) == (
        task.name, task.email, task.check_in, task.nights, task.room, task.breakfast)
    assert all(app.staff_password not in repr(r["body"]) for r in sim.requests())


def assert_clean(sim: testing.Sim) -> None:
    """Every request followed the API's rules, and the policy never failed."""
    assert sim.violations() == []
    assert sim.policy_errors == []
    assert all(r["status"] == 200 for r in sim.requests())
