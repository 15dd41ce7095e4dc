"""A live check on the screen: the student's phone, the teacher's control page and the projector.

Three addresses: ``learn?live=CODE`` (a student: the question, one answer per device),
``learn?live=CODE&key=KEY`` (the teacher's control: the links to hand out, reveal, close; never
shown on the projector) and ``learn?live=CODE&view=projector`` (the tally, no key). The device id
is a random id the browser keeps (a cookie of a year, mirrored in localStorage), so a reload or a
new tab is the same device; the server reads it from the cookies the browser sends when the page
connects. An answer is checked on the value typed (no rounding) and stored as typed.
"""
from __future__ import annotations

import functools
import html
import re

import streamlit as st

import metrics
from metrics import settings as settings_module
from metrics.analysis import lessons, sandbox
from metrics.analysis.lessons import Exercise
from metrics.store.live import Check, CheckClosed, LiveChecks
from ndcg_lab.ui import address, projector, share
from ndcg_lab.ui import exercise as exview
from ndcg_lab.ui.text import md

ss = st.session_state
COOKIE = "ndcg_lab_device"
_DEVICE = re.compile(r"[0-9a-f]{32}")

# Sets the device id once per browser (kept in localStorage too, so a cleared cookie comes back)
# and reloads, so that the next connection sends it; a browser that keeps no cookie is not
# reloaded twice in one tab.
_DEVICE_SCRIPT = """<script>
(function () {
  var name = "%s", pattern = /^[0-9a-f]{32}$/;
  var match = document.cookie.match(new RegExp("(?:^|; )" + name + "=([0-9a-f]{32})"));
  var id = match ? match[1] : localStorage.getItem(name);
  if (!id || !pattern.test(id)) {
    var bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    id = Array.from(bytes, function (b) { return b.toString(16).padStart(2, "0"); }).join("");
  }
  localStorage.setItem(name, id);
  document.cookie = name + "=" + id + "; max-age=31536000; path=/; SameSite=Lax";
  if (!match && !sessionStorage.getItem(name + "_reloaded")) {
    sessionStorage.setItem(name + "_reloaded", "1");
    location.reload();
  }
})();
</script>"""


@functools.cache
def _live_checks(home: str) -> LiveChecks:
    return LiveChecks(home)


def live_checks() -> LiveChecks:
    """The live checks of this server (one SQLite file under NDCG_LAB_HOME, shared by processes)."""
    return _live_checks(str(settings_module.load().home))


def cookie_device() -> str | None:
    """The device id this browser sent when the page connected (None before it has one)."""
    value = st.context.cookies.get(COOKIE)
    return value if value and _DEVICE.fullmatch(value) else None


def device_id() -> str | None:
    """This browser's device id; without one, the script that makes it (the page then reloads)."""
    device = cookie_device()
    if device is None:
        st.html(_DEVICE_SCRIPT % COOKIE, unsafe_allow_javascript=True)
    return device


def answer_label(ex: Exercise, response, result: lessons.Result) -> str:
    """An answer as the tally counts it: a number as typed (6 significant digits, never rounded to
    the checking precision), an option's label, the two sides, or a reordered list's verdict."""
    if ex.kind == "number":
        return f"{float(response):.6g}"
    if ex.kind == "choice":
        return lessons.option_labels(ex)[int(response)]
    if ex.kind == "reorder":
        return f"order reaching {result.value:.4f}"
    return f"exp {response['exp']} · linear {response['linear']}"


def right_label(ex: Exercise) -> str:
    """The right answer as the projector states it after the reveal."""
    return exview.right_text(ex)


def page(code: str, key: str | None, view: str | None) -> None:
    """Route a live check's address to the projector, the teacher's control or the student."""
    live = live_checks()
    try:
        check = live.get(code)
        [ex] = lessons.decode(check.token)
    except metrics.MetricsError as exc:
        st.error(md(str(exc)))
        return
    if view == projector.VALUE:
        address.write({"live": check.code, projector.PARAM: projector.VALUE})
        tally(live, check, ex)
    elif key and live.is_teacher(check.code, key):
        address.write({"live": check.code, "key": key})
        teacher(live, check, ex, key)
    else:
        address.write({"live": check.code})
        student(live, check, ex)


def student(live: LiveChecks, check: Check, ex: Exercise) -> None:
    """The student's view: the question and the answer widgets; one answer per device."""
    st.header(f"Live check {check.code}")
    device = device_id()
    if device is None:
        st.info("Getting this device ready… If this stays, allow cookies for this site and reload the page.")
        return
    sent = ss.get(f"learn_live_sent_{check.code}")
    if sent or live.has_answered(check.code, device):
        st.success(sent or "This device has answered this check: its first answer counts. The result is on your "
                   "teacher's screen.")
        return
    if not check.is_open():
        st.warning("This live check is closed: it takes no more answers.")
        return
    key = f"learn_live_{check.code}"
    st.markdown(f"**{md(ex.question)}**")
    exview.show_inputs(ex, key)
    read = exview.response_widgets(ex, key)

    def send():
        try:
            response = read()
            result = lessons.check(ex, response)
            counted = live.answer(check.code, device, answer_label(ex, response, result), result.correct)
            ss[f"learn_live_sent_{check.code}"] = (
                "Answer sent. The result is on your teacher's screen." if counted else
                "This device had answered already: its first answer counts.")
            ss.pop(f"{key}_error", None)
        except CheckClosed as exc:
            ss[f"{key}_error"] = f"Not counted: {exc}"
        except metrics.MetricsError as exc:
            ss[f"{key}_error"] = str(exc)
    st.button("Send my answer", key=f"{key}_send", on_click=send, type="primary")
    if ss.get(f"{key}_error"):
        st.error(md(ss[f"{key}_error"]))


def _status(live: LiveChecks, check: Check) -> str:
    check = live.get(check.code)
    total = sum(t.n for t in live.tally(check.code))
    left = check.seconds_left()
    when = ("answer revealed" if check.revealed is not None else
            f"closes in {left // 60}:{left % 60:02d}" if left else "closed")
    return f"{total} answer{'s' if total != 1 else ''} · {when}"


def teacher(live: LiveChecks, check: Check, ex: Exercise, key: str) -> None:
    """The teacher's control (keep this address to yourself): links, reveal, close, the counts."""
    st.header(f"Live check {check.code}: your control page")
    st.caption("Keep this page's address to yourself: it reveals and closes the check. Put the projector "
               "view on the room's screen; it shows no key.")
    s1, s2 = st.columns(2)
    with s1:
        st.markdown("**For the class** (their phones)")
        share.handout("the live check", "learn", {"live": check.code}, here="learn")
    with s2:
        st.markdown("**For the projector**")
        url = share.handout("the projector", "learn", {"live": check.code, projector.PARAM: projector.VALUE},
                            here="learn")
        if url:
            st.link_button("Open the projector view", url, icon=":material/present_to_all:")
    st.markdown(f"**{md(ex.question)}**")
    check = live.get(check.code)
    st.markdown(_status(live, check))
    rows = live.tally(check.code)
    if rows:
        st.table({"answer": [t.answer for t in rows], "answers": [t.n for t in rows],
                  **({"right": ["yes" if t.correct else "" for t in rows]} if check.revealed is not None else {})})
    b1, b2, b3 = st.columns(3)
    b1.button("Refresh", key="learn_live_refresh", width="stretch")
    b2.button("Reveal the answer", key="learn_live_reveal", width="stretch", disabled=check.revealed is not None,
              on_click=lambda: live.reveal(check.code), help="Shows the answer here and on the projector; "
              "the check then takes no more answers.")
    b3.button("Close now", key="learn_live_close", width="stretch", disabled=not check.is_open(),
              on_click=lambda: live.close_now(check.code))
    if check.revealed is not None:
        exview.show_reveal(ex)


def _lists_html(ex: Exercise) -> str:
    """The exercise's list(s) for the projector, one column a rank (a list's arithmetic is the
    students' to do: no gain, no score)."""
    if ex.kind == "higher":
        lists = [("List A", ex.sandbox), ("List B", ex.other)]
    elif ex.sandbox is not None and ex.collection is None and ex.quantity not in ("discount", "loss", "gain"):
        lists = [("", ex.sandbox)]
    else:
        return ""
    out = []
    for title, sb in lists:
        frame = exview.list_frame(sb).T
        caption = f"{title} · " if title else ""
        out.append(f'<div class="pj-list">{html.escape(caption)}cutoff k = {sb.cutoff}, '
                   f'{html.escape(sandbox.GAIN_NAMES[sb.gain])} gain{frame.to_html(escape=True, border=0)}</div>')
    return "".join(out)


def tally(live: LiveChecks, check: Check, ex: Exercise) -> None:
    """The projector's tally: the question, the answers as large bars, the short link and its QR
    code; redrawn every :data:`projector.LIVE_REFRESH` seconds."""
    projector.layout()
    student_url = share.short_url("learn", {"live": check.code}, here="learn")

    @st.fragment(run_every=projector.LIVE_REFRESH)
    def redraw():
        now = live.get(check.code)
        rows = [(t.answer, t.n, t.correct) for t in live.tally(check.code)]
        revealed = now.revealed is not None
        left = f'<div class="pj-question">{html.escape(ex.question)}</div>{_lists_html(ex)}'
        if revealed:
            left += f'<div class="pj-answer"><b>Answer: {html.escape(right_label(ex))}</b></div>'
        left += projector.tally_html(rows, revealed=revealed)
        right = (f'<div class="pj-link">{html.escape(student_url)}</div>'
                 f'{share.qr_html(student_url, width="min(46vh, 100%)")}')
        st.html(projector.page_html(f"Live check {check.code}", _status(live, now), left, right))

    redraw()
