/* hands-testkit: a GTK 3 client with one text view, for tests of what a GTK application
 * receives. Built against the GTK runtime library alone (no development headers): the few
 * functions it calls are declared here.
 *
 * The window takes the input focus; GTK answers _NET_WM_PING by itself. Commands on stdin, one
 * per line; answers on stdout:
 *   (start)     R <window>              ready: mapped, focused
 *   text        T <n>\n<n bytes of UTF-8>\n   the text view's whole text
 *   clear       C                       the text view emptied
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <X11/Xlib.h>

typedef struct _GtkWidget GtkWidget;
typedef struct _GtkTextBuffer GtkTextBuffer;
typedef struct _GIOChannel GIOChannel;
typedef struct { void *opaque[32]; } GtkTextIter; /* larger than GTK's 80 bytes */

extern void gtk_init(int *argc, char ***argv);
extern GtkWidget *gtk_window_new(int type);
extern GtkWidget *gtk_text_view_new(void);
extern void gtk_container_add(GtkWidget *container, GtkWidget *widget);
extern void gtk_window_set_default_size(GtkWidget *window, int width, int height);
extern void gtk_window_set_title(GtkWidget *window, const char *title);
extern void gtk_widget_show_all(GtkWidget *widget);
extern void gtk_widget_grab_focus(GtkWidget *widget);
extern void *gtk_widget_get_window(GtkWidget *widget);
extern GtkTextBuffer *gtk_text_view_get_buffer(GtkWidget *view);
extern void gtk_text_buffer_get_bounds(GtkTextBuffer *buffer, GtkTextIter *start, GtkTextIter *end);
extern char *gtk_text_buffer_get_text(GtkTextBuffer *buffer, const GtkTextIter *start,
                                      const GtkTextIter *end, int include_hidden);
extern void gtk_text_buffer_set_text(GtkTextBuffer *buffer, const char *text, int len);
extern void gtk_main(void);
extern void gtk_main_quit(void);
extern unsigned long g_signal_connect_data(void *instance, const char *signal, void (*handler)(void),
                                           void *data, void *destroy, int flags);
extern GIOChannel *g_io_channel_unix_new(int fd);
extern unsigned g_io_add_watch(GIOChannel *channel, int condition,
                               int (*func)(GIOChannel *, int, void *), void *data);
extern void g_free(void *mem);
extern void *gdk_display_get_default(void);
extern Display *gdk_x11_display_get_xdisplay(void *display);
extern unsigned long gdk_x11_window_get_xid(void *window);

#define G_IO_IN 1
#define G_IO_HUP 16

static GtkWidget *window;
static GtkWidget *view;

static int on_map(GtkWidget *widget, void *event, void *data) {
    (void)widget; (void)event; (void)data;
    Display *dpy = gdk_x11_display_get_xdisplay(gdk_display_get_default());
    unsigned long xid = gdk_x11_window_get_xid(gtk_widget_get_window(window));
    XSetInputFocus(dpy, xid, RevertToParent, CurrentTime);
    XSync(dpy, False);
    printf("R %lu\n", xid);
    fflush(stdout);
    return 0;
}

static int on_stdin(GIOChannel *channel, int condition, void *data) {
    (void)channel; (void)data;
    char line[256];
    if ((condition & G_IO_HUP) && !(condition & G_IO_IN)) {
        gtk_main_quit();
        return 0;
    }
    if (!fgets(line, sizeof line, stdin)) {
        gtk_main_quit();
        return 0;
    }
    GtkTextBuffer *buffer = gtk_text_view_get_buffer(view);
    if (strncmp(line, "text", 4) == 0) {
        GtkTextIter start, end;
        gtk_text_buffer_get_bounds(buffer, &start, &end);
        char *text = gtk_text_buffer_get_text(buffer, &start, &end, 1);
        size_t n = strlen(text);
        printf("T %zu\n", n);
        fwrite(text, 1, n, stdout);
        printf("\n");
        fflush(stdout);
        g_free(text);
    } else if (strncmp(line, "clear", 5) == 0) {
        gtk_text_buffer_set_text(buffer, "", 0);
        printf("C\n");
        fflush(stdout);
    }
    return 1;
}

int main(int argc, char **argv) {
    setvbuf(stdin, NULL, _IONBF, 0);
    gtk_init(&argc, &argv);
    window = gtk_window_new(0);
    gtk_window_set_title(window, "hands-testkit gtk_text");
    gtk_window_set_default_size(window, 480, 320);
    view = gtk_text_view_new();
    gtk_container_add(window, view);
    g_signal_connect_data(window, "map-event", (void (*)(void))on_map, NULL, NULL, 0);
    g_signal_connect_data(window, "destroy", (void (*)(void))gtk_main_quit, NULL, NULL, 0);
    gtk_widget_grab_focus(view);
    gtk_widget_show_all(window);
    gtk_widget_grab_focus(view);
    g_io_add_watch(g_io_channel_unix_new(0), G_IO_IN | G_IO_HUP, on_stdin, NULL);
    gtk_main();
    return 0;
}
