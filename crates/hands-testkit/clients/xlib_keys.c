/* hands-testkit: a plain Xlib client that reads keys the way xev does (XLookupString, with
 * Xlib's XKB support), for tests of what an Xlib application receives.
 *
 * One window that takes the input focus and lists only WM_DELETE_WINDOW in WM_PROTOCOLS (no
 * _NET_WM_PING, like xev and xterm). Output on stdout, one line per event, fully buffered and
 * flushed when a sync message arrives:
 *   R <window>                          ready (mapped and focused)
 *   K <keycode> <state> <keysym> <base> a key press: the keysym XLookupString gives, and the
 *                                       key's level-1 keysym in the event's group (hex)
 *   M <first> <count>                   a keyboard MappingNotify (XRefreshKeyboardMapping called)
 *   S <token>                           every earlier event is above (answer to a sync message)
 * A client message of type HANDS_TESTKIT_SYNC carries the token in data.l[0].
 */
#include <stdio.h>
#include <stdlib.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/XKBlib.h>

int main(void) {
    static char out[1 << 20];
    setvbuf(stdout, out, _IOFBF, sizeof out);
    Display *dpy = XOpenDisplay(NULL);
    if (!dpy) {
        fprintf(stderr, "cannot open display\n");
        return 1;
    }
    int screen = DefaultScreen(dpy);
    Window win = XCreateSimpleWindow(dpy, RootWindow(dpy, screen), 0, 0, 320, 200, 0,
                                     BlackPixel(dpy, screen), WhitePixel(dpy, screen));
    Atom wm_delete = XInternAtom(dpy, "WM_DELETE_WINDOW", False);
    Atom sync = XInternAtom(dpy, "HANDS_TESTKIT_SYNC", False);
    XSetWMProtocols(dpy, win, &wm_delete, 1);
    XStoreName(dpy, win, "hands-testkit xlib_keys");
    XSelectInput(dpy, win, KeyPressMask | KeyReleaseMask | StructureNotifyMask | FocusChangeMask);
    XMapWindow(dpy, win);
    for (;;) {
        XEvent ev;
        XNextEvent(dpy, &ev);
        if (ev.type == MapNotify) {
            XSetInputFocus(dpy, win, RevertToParent, CurrentTime);
            XSync(dpy, False);
            printf("R %lu\n", (unsigned long)win);
            fflush(stdout);
            break;
        }
    }
    for (;;) {
        XEvent ev;
        XNextEvent(dpy, &ev);
        switch (ev.type) {
        case KeyPress: {
            char text[64];
            KeySym sym = NoSymbol;
            XLookupString(&ev.xkey, text, sizeof text, &sym, NULL);
            KeySym base = XkbKeycodeToKeysym(dpy, ev.xkey.keycode,
                                             XkbGroupForCoreState(ev.xkey.state), 0);
            printf("K %u %u %lx %lx\n", ev.xkey.keycode, ev.xkey.state, (unsigned long)sym,
                   (unsigned long)base);
            break;
        }
        case MappingNotify:
            XRefreshKeyboardMapping(&ev.xmapping);
            if (ev.xmapping.request == MappingKeyboard)
                printf("M %d %d\n", ev.xmapping.first_keycode, ev.xmapping.count);
            break;
        case ClientMessage:
            if (ev.xclient.message_type == sync) {
                printf("S %ld\n", ev.xclient.data.l[0]);
                fflush(stdout);
            } else if ((Atom)ev.xclient.data.l[0] == wm_delete) {
                return 0;
            }
            break;
        default:
            break;
        }
    }
}
