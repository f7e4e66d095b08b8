"""The scripted planner's email-inbox policies (caap/testing/planner/policies/email.py): reading the many wordings
of the task, and the step planned on each screen of the inbox app, on prompts built by the real prompter."""

from __future__ import annotations

from typing import Any

import pytest
from scripted_prompts import CHANGED, SAME, act, el, plan

import caap.testing.planner.kit as kit
from caap.elements import Element
from caap.testing.planner.policies import email as em


def names(actions: list[tuple[str, dict[str, Any]]]) -> list[str]:
    return [n for n, _ in actions]


# --- screens, laid out as the DOM oracle gives them ---------------------------------------------------


def inbox(*senders: str, top: int = 75) -> list[Element]:
    """The inbox list: per thread a sender line, a subject, a snippet and the star and trash icons."""
    out = [el(4, "text", (7, 55, 49, 69), text="Primary"), el(5, "icon", (122, 55, 134, 67), subtype="search"),
           el(6, "scrollbar", (142, 52, 157, 202))]
    for i, name in enumerate(senders):
        y = top + 39 * i
        base = 10 + 10 * i
        out += [el(base, "tabled_text", (7, y, 45, min(y + 12, 202)), text=name),
                el(base + 1, "icon", (103, y + 5, 115, min(y + 17, 202)), subtype="important", checked=False),
                el(base + 2, "icon", (117, y + 5, 129, min(y + 17, 202)), subtype="delete")]
        if y + 23 <= 202:
            out += [el(base + 3, "tabled_text", (7, y + 12, 60, y + 23), text="Tortor."),
                    el(base + 4, "tabled_text", (7, y + 23, 80, min(y + 34, 202)), text="Duis facilisis ..")]
    return out


def email_view(sender: str) -> list[Element]:
    return [el(25, "icon", (2, 56, 14, 69), subtype="back"),
            el(26, "icon", (113, 57, 125, 69), subtype="important", checked=False),
            el(27, "icon", (127, 57, 139, 69), subtype="delete"),
            el(28, "text", (7, 74, 81, 88), text="Aenean vitae."), el(29, "text", (6, 93, 35, 103), text=sender),
            el(30, "text", (6, 103, 27, 112), text="to me"),
            el(31, "text", (6, 116, 117, 127), text="Commodo est, aliquet id."),
            el(34, "icon", (34, 164, 53, 182), subtype="reply"), el(35, "icon", (91, 164, 110, 182), subtype="forward"),
            el(36, "text", (33, 182, 54, 191), text="Reply"), el(37, "text", (85, 182, 116, 191), text="Forward")]


def reply_form(sender: str, typed: str = "", focused: bool = False) -> list[Element]:
    return [el(25, "icon", (5, 56, 17, 69), subtype="back"), el(38, "icon", (141, 55, 155, 69), subtype="send"),
            el(39, "text", (4, 75, 51, 86), text=f"to: {sender}"),
            el(40, "text", (4, 91, 125, 102), text="subject: Re: Aenean vitae."),
            el(41, "text_area", (2, 105, 156, 204), text=typed, focused=focused)]


def forward_form(to: str = "", focused: bool = False) -> list[Element]:
    return [el(25, "icon", (5, 56, 17, 69), subtype="back"), el(38, "icon", (141, 55, 155, 69), subtype="send"),
            el(39, "text", (4, 75, 20, 86), text="to:"),
            el(43, "input_field", (20, 73, 150, 88), text=to, focused=focused),
            el(40, "text", (4, 91, 125, 102), text="subject: Aenean vitae."),
            el(41, "text_area", (2, 105, 156, 204), text="Commodo est, aliquet id.", focused=False)]


REPLY = 'Find the email by Bettine and reply to them with the text "Gravida. Est sit".'
FORWARD = "Find the email by Bettine and forward that email to Lidia."
DELETE = "Find the email by Bettine and click the trash icon to delete it."
STAR = "Find the email by Bettine and click the star icon to mark it as important."


# --- reading the task ---------------------------------------------------------------------------------


@pytest.mark.parametrize("task, goal", [
    (REPLY, ("reply", "Bettine", "", "Gravida. Est sit")),
    (FORWARD, ("forward", "Bettine", "Lidia", "")),
    (DELETE, ("delete", "Bettine", "", "")),
    (STAR, ("important", "Bettine", "", "")),
    # Free wordings: the sender is the name after "from"/"by", the owner of "'s", or the one who "sent" it.
    ("Give Bobine the message you received from Cora,", ("forward", "Cora", "Bobine", "")),
    ("Send Astrix Sarette's email.", ("forward", "Sarette", "Astrix", "")),
    ("Send Bettine the information Lidia sent to you.", ("forward", "Lidia", "Bettine", "")),
    ("Yevette wants his or her message to be sent to Arlyne.", ("forward", "Yevette", "Arlyne", "")),
    ("Amargo is waiting for the email by Lissie.", ("forward", "Lissie", "Amargo", "")),
    ("Could you find Alexa's email, then forward it to May?", ("forward", "Alexa", "May", "")),
    # A name that contains "mark" is not the verb.
    ("I would like you to send Marketa's email to Janeva.", ("forward", "Marketa", "Janeva", "")),
    ("Please delete Amargo's emails.", ("delete", "Amargo", "", "")),
    ("Bobine's email should be deleted from the inbox.", ("delete", "Bobine", "", "")),
    ("put a star on Ingrid's email", ("important", "Ingrid", "", "")),
    ("Star the email from Cora.", ("important", "Cora", "", "")),
    ("Can you find the email from Dee Dee and label it as important?", ("important", "Dee Dee", "", "")),
    # The quoted text is the message, even when the quotes are doubled; its capitalised words are no names.
    ('Reply to Rea\'s email with "Nulla netus gravida. Et.".', ("reply", "Rea", "", "Nulla netus gravida. Et.")),
    ('please send a reply email to Theodora with ""Lorem ipsum. Dolor" "',
     ("reply", "Theodora", "", "Lorem ipsum. Dolor")),
    ('Siri please reply "Odio" to Star\'s message.', ("reply", "Star", "", "Odio")),
    ('Hi Cora, I\'ll "Sed eget".', ("reply", "Cora", "", "Sed eget")),
])
def test_parse_goal_reads_every_wording(task: str, goal: tuple[str, str, str, str]) -> None:
    g = em.parse_goal(task)
    assert g is not None
    assert (g.action, g.name, g.dest, g.message) == goal


def test_the_policy_takes_email_tasks_and_leaves_other_groups_tasks_alone() -> None:
    pattern = next(pt for pt, fn in kit.POLICIES if fn is em.email_inbox)
    for task in (REPLY, "Tell Cora \"Odio\"", "Annaliese's appontment needs to be marked important.",
                 "Send Marcellina the information Dorey sent to you."):
        assert pattern.match(task), task
    for task in ('Click the "Menu" button, and then find and click on the item labeled "Save".',
                 "Select Cats>Lion", "Select 5 with the spinner and hit Submit.",
                 "Copy the text in the textarea below, paste it into the textbox and press Submit."):
        assert not pattern.match(task), task


# --- the inbox ----------------------------------------------------------------------------------------


def test_delete_and_star_click_the_icons_on_the_senders_row() -> None:
    screen = inbox("Lidia", "Bettine", "Danice")
    assert plan(DELETE, screen) == [("click_element", {"element_id": 22}), ("done", {"reason": "the task is complete"})]
    assert plan(STAR, screen)[0] == ("click_element", {"element_id": 21})


def test_reply_and_forward_open_the_email() -> None:
    screen = inbox("Lidia", "Bettine", "Danice")
    assert plan(REPLY, screen) == [("click_element", {"element_id": 20})]
    assert plan(FORWARD, screen) == [("click_element", {"element_id": 20})]


def test_a_sender_not_on_show_is_searched_for() -> None:
    screen = inbox("Lidia", "Danice", "Penelope")
    assert plan(DELETE, screen) == [("click_element", {"element_id": 5})]


def search_view(typed: str = "", *results: str) -> list[Element]:
    out = [el(24, "icon", (5, 56, 17, 69), subtype="back"),
           el(25, "input_field", (2, 72, 126, 89), text=typed, focused=True),
           el(26, "text", (12, 75, 43, 85), text="Results")]
    for i, name in enumerate(results):
        y = 90 + 39 * i
        out += [el(50 + 5 * i, "tabled_text", (7, y, 56, y + 12), text=name, highlighted=True),
                el(51 + 5 * i, "icon", (103, y + 5, 115, y + 17), subtype="important", checked=False),
                el(52 + 5 * i, "icon", (117, y + 5, 129, y + 17), subtype="delete")]
    return out


def test_the_search_box_gets_the_name_then_the_result_is_opened() -> None:
    assert plan(DELETE, search_view()) == [("press_control_A", {}), ("type_text", {"string_to_type": "Bettine"})]
    assert plan(DELETE, search_view("Bett")) == [("press_control_A", {}),
                                                 ("type_text", {"string_to_type": "Bettine"})]
    # The result opens the email (its icons in the results list do nothing on this page).
    assert plan(DELETE, search_view("Bettine", "Bettine")) == [("click_element", {"element_id": 50})]


def test_a_search_without_results_waits_once_then_gives_up() -> None:
    assert names(plan(REPLY, search_view("Bettine"))) == ["wait"]
    waited = [(act("wait", seconds=0.5), SAME)]
    assert names(plan(REPLY, search_view("Bettine"), waited)) == ["fail"]


def test_a_row_cut_by_the_lists_edge_is_opened_to_use_the_emails_own_icon() -> None:
    screen = inbox("Lidia", "Danice", "Penelope", "Bettine")  # the list's edge cuts Bettine's icons
    assert plan(STAR, screen) == [("click_element", {"element_id": 40})]


def test_a_possessive_without_apostrophe_finds_the_sender() -> None:
    screen = inbox("Lidia", "Ingrid")
    assert plan("find Ingrids email and mark it as important", screen)[0] == ("click_element", {"element_id": 21})


# --- the open email -----------------------------------------------------------------------------------


def test_the_open_email_of_the_sender_leads_to_the_form_or_the_icon() -> None:
    assert plan(REPLY, email_view("Bettine")) == [("click_element", {"element_id": 34})]
    assert plan(FORWARD, email_view("Bettine")) == [("click_element", {"element_id": 35})]
    assert plan(DELETE, email_view("Bettine"))[0] == ("click_element", {"element_id": 27})
    assert plan(STAR, email_view("Bettine"))[0] == ("click_element", {"element_id": 26})


def test_another_senders_email_goes_back_to_the_inbox() -> None:
    assert plan(REPLY, email_view("Lidia")) == [("click_element", {"element_id": 25})]


# --- the forms ----------------------------------------------------------------------------------------


def test_reply_types_the_message_then_sends() -> None:
    actions = plan(REPLY, reply_form("Bettine"))
    assert actions == [("click_element", {"element_id": 41}), ("press_control_A", {}),
                       ("type_text", {"string_to_type": "Gravida. Est sit"}), ("click_element", {"element_id": 38}),
                       ("done", {"reason": "the task is complete"})]


def test_reply_with_the_message_in_place_only_sends() -> None:
    actions = plan(REPLY, reply_form("Bettine", "Gravida. Est sit", focused=True))
    assert actions == [("click_element", {"element_id": 38}), ("done", {"reason": "the task is complete"})]


def test_reply_wrapped_over_lines_in_the_text_area_is_in_place() -> None:
    """The text area shows the message wrapped: its text has a line break where the words wrap."""
    actions = plan(REPLY, reply_form("Bettine", "Gravida. Est\nsit", focused=True))
    assert actions == [("click_element", {"element_id": 38}), ("done", {"reason": "the task is complete"})]
    # Other words (or other case) are still another message.
    assert names(plan(REPLY, reply_form("Bettine", "Gravida. est\nsit", focused=True)))[:2] == \
        ["press_control_A", "type_text"]


def test_reply_with_wrong_text_replaces_it() -> None:
    actions = plan(REPLY, reply_form("Bettine", "Gravida.", focused=True))
    assert names(actions) == ["press_control_A", "type_text", "click_element", "done"]


def test_a_reply_to_the_wrong_sender_is_left() -> None:
    assert plan(REPLY, reply_form("Lidia")) == [("click_element", {"element_id": 25})]


def test_forward_fills_the_recipient_and_keeps_the_body() -> None:
    actions = plan(FORWARD, forward_form())
    assert actions == [("click_element", {"element_id": 43}), ("press_control_A", {}),
                       ("type_text", {"string_to_type": "Lidia"}), ("click_element", {"element_id": 38}),
                       ("done", {"reason": "the task is complete"})]
    assert names(plan(FORWARD, forward_form("Lidia", focused=True))) == ["click_element", "done"]


def test_the_wrong_form_is_left() -> None:
    assert plan(REPLY, forward_form()) == [("click_element", {"element_id": 25})]
    assert plan(FORWARD, reply_form("Bettine")) == [("click_element", {"element_id": 25})]


def test_after_sending_the_task_is_done() -> None:
    send = el(38, "icon", (141, 55, 155, 69), subtype="send")
    actions = plan(REPLY, reply_form("Bettine", "Gravida. Est sit"), [(act("click_element", send), CHANGED)])
    assert actions == [("done", {"reason": "the task is complete"})]
