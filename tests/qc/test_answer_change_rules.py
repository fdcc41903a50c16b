"""When an answer may still change: each rule on its own (qc.answer_change_rules)."""

import pytest

from qc.answer_change_rules import (
    ARCHIVED,
    COMPLETE,
    DELETED,
    PARTICIPANT,
    REVIEWED,
    UNTIL_COMPLETE,
    UNTIL_REVIEWED,
    AnswerFacts,
    answer_closed_reason,
)

OPEN = AnswerFacts(
    participant=False, reviewed=False, complete=False, project_archived=False, item_deleted=False
)


def facts(**changes) -> AnswerFacts:
    return AnswerFacts(**{**OPEN.__dict__, **changes})


@pytest.mark.parametrize("until", [UNTIL_REVIEWED, UNTIL_COMPLETE])
def test_an_answer_nobody_has_touched_is_open_under_either_setting(until):
    assert answer_closed_reason(OPEN, until=until) is None


@pytest.mark.parametrize("until", [UNTIL_REVIEWED, UNTIL_COMPLETE])
def test_a_reviewed_answer_is_closed_under_either_setting(until):
    assert answer_closed_reason(facts(reviewed=True), until=until) == REVIEWED


def test_a_complete_item_closes_its_answers_only_when_the_project_says_so():
    assert answer_closed_reason(facts(complete=True), until=UNTIL_REVIEWED) is None
    assert answer_closed_reason(facts(complete=True), until=UNTIL_COMPLETE) == COMPLETE


@pytest.mark.parametrize("until", [UNTIL_REVIEWED, UNTIL_COMPLETE])
def test_a_participant_never_changes_an_answer(until):
    assert answer_closed_reason(facts(participant=True), until=until) == PARTICIPANT


def test_a_deleted_item_or_an_archived_project_closes_everything_first():
    everything = facts(participant=True, reviewed=True, complete=True, project_archived=True)
    assert answer_closed_reason(everything, until=UNTIL_COMPLETE) == ARCHIVED
    assert (
        answer_closed_reason(facts(item_deleted=True, project_archived=True), until=UNTIL_REVIEWED)
        == DELETED
    )
