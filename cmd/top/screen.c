/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The terminal UI (ncurses): repaints in place every interval and on
 * every key, follows resizes (SIGWINCH through the signalfd, then
 * resizeterm), and leaves the terminal as it found it (endwin) on q, a
 * signal or an error. Only plain attributes: bold, reverse, underline,
 * so it reads the same over ssh on any terminal.
 */
#include <curses.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "clock.h"
#include "top.h"

static void paint(const struct top_view *v, const struct top_status *st)
{
	struct top_line *l;
	unsigned w = (unsigned)COLS, h = (unsigned)LINES;
	size_t n = top_render(v, st, w, h, &l);

	erase();
	for (size_t i = 0; i < n && i < h; i++) {
		attr_t a = A_NORMAL;
		switch (l[i].attr) {
		case TA_TITLE: a = A_BOLD; break;
		case TA_HEAD: a = A_REVERSE; break;
		case TA_SEL: a = A_BOLD | A_UNDERLINE; break;
		case TA_WARN: a = A_BOLD; break;
		default: break;
		}
		attrset(a);
		mvaddnstr((int)i, 0, l[i].text, (int)w);
		if (l[i].attr == TA_HEAD) /* the bar spans the width */
			for (int x = (int)strlen(l[i].text); x < (int)w; x++)
				mvaddch((int)i, x, ' ');
	}
	attrset(A_NORMAL);
	free(l);
	refresh();
}

static void resize(void)
{
	struct winsize ws;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row &&
	    ws.ws_col)
		resizeterm(ws.ws_row, ws.ws_col);
}

/* One key: 1 to quit, else 0. */
static int key(struct top_view *v, struct top_status *st, bool *paused,
	       int ch)
{
	unsigned page = LINES > TOP_HEAD_LINES + 1 ?
			(unsigned)LINES - TOP_HEAD_LINES : 1;

	if (st->help) { /* pages forth and back; other keys leave it */
		unsigned pages = top_help_pages((unsigned)LINES);
		if ((ch == ' ' || ch == KEY_NPAGE || ch == KEY_DOWN ||
		     ch == 'j') && st->help < pages)
			st->help++;
		else if ((ch == KEY_PPAGE || ch == KEY_UP || ch == 'k') &&
			 st->help > 1)
			st->help--;
		else
			st->help = 0;
		return ch == 'q';
	}
	switch (ch) {
	case 'q': case 'Q': return 1;
	case 'h': case '?': st->help = 1; return 0;
	case 't': v->tree = !v->tree; break;
	case '<': v->sort = v->sort == 0 ? TOP_SORT_NAME : v->sort - 1; break;
	case '>': v->sort = v->sort == TOP_SORT_NAME ? 0 : v->sort + 1; break;
	case 'r': v->reverse = !v->reverse; break;
	case 'N': v->sort = TOP_SORT_NAME; break;
	case 'p': case ' ': *paused = !*paused; return 0;
	case 'd': top_view_next_depth(v); return 0;
	case '-': case KEY_LEFT: top_view_fold(v, 1); return 0;
	case '+': case '=': case KEY_RIGHT: top_view_fold(v, 0); return 0;
	case '\n': case '\r': case KEY_ENTER: top_view_fold(v, -1); return 0;
	case KEY_UP: case 'k': top_view_move(v, -1); return 0;
	case KEY_DOWN: case 'j': top_view_move(v, 1); return 0;
	case KEY_PPAGE: top_view_move(v, -(long)page); return 0;
	case KEY_NPAGE: top_view_move(v, (long)page); return 0;
	case KEY_HOME: top_view_move(v, -(long)v->nvis); return 0;
	case KEY_END: top_view_move(v, (long)v->nvis); return 0;
	default:
		for (int m = 0; m < M__COUNT; m++)
			if (ch == top_metrics[m].key) {
				v->sort = m;
				break;
			}
		break;
	}
	top_view_order(v);
	return 0;
}

int top_screen(struct top_opts *o, struct top_source *src, int sigfd)
{
	struct top_view v;
	char err[300] = "";
	bool paused = false, resized = false;
	struct top_status st = { .source = top_source_name(src) };
	uint64_t shown = 0, now = tsc_mono_ns();
	uint64_t deadline = o->tsc.duration_ns ? now + o->tsc.duration_ns
					       : UINT64_MAX;

	top_view_setup(&v, o);
	if (top_refresh(&v, src, err, sizeof(err)) < 0) {
		fprintf(stderr, TOP_PROG ": %s\n", err);
		top_view_free(&v);
		return TSC_EXIT_ERROR;
	}
	if (!initscr()) {
		fprintf(stderr, TOP_PROG ": cannot initialise the terminal\n");
		top_view_free(&v);
		return TSC_EXIT_ERROR;
	}
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);

	uint64_t next = now + top_interval(o, &v);
	for (;;) {
		st.paused = paused;
		st.interval_s = (double)top_interval(o, &v) / 1e9;
		st.error = *err ? err : NULL;
		paint(&v, &st);
		uint64_t until = next < deadline ? next : deadline;
		int w = top_wait(sigfd, true, until, &resized);
		if (w == 1)
			break;
		if (resized) {
			resized = false;
			resize();
		}
		int quit = 0, ch;
		while (!quit && (ch = getch()) != ERR)
			if (ch != KEY_RESIZE)
				quit = key(&v, &st, &paused, ch);
		if (quit)
			break;
		now = tsc_mono_ns();
		if (now >= deadline)
			break;
		if (now < next)
			continue;
		next += top_interval(o, &v);
		if (next <= now)
			next = now + top_interval(o, &v);
		if (paused)
			continue;
		err[0] = '\0';
		if (top_refresh(&v, src, err, sizeof(err)) > 0)
			shown++;
		if (o->iterations && shown >= o->iterations) {
			st.error = NULL;
			paint(&v, &st);
			break;
		}
	}
	endwin();
	top_view_free(&v);
	return 0;
}
