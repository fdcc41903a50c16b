"""A Chinese project from end to end in the browser, with the interface in Chinese: raw texts
and a fine-grained benchmark file are uploaded on the project page and split per character;
an annotator drags over characters and submits; a reviewer accepts on the review page; the
researcher exports ERASER and the benchmark's format, and both hold the Chinese tokens and
the highlighted characters."""

import json
import zipfile
from pathlib import Path

import pytest
from django.conf import settings

from annotate.models import (
    Annotation,
    Document,
    InstructionVariant,
    Item,
    ProjectMembership,
    RationaleSet,
    Role,
    TaskType,
)
from exports.models import Export
from exports.params import export_params_from
from exports.services import export_build
from frontend.models import UserPreference
from qc.models import ReviewVerdict
from rationale_metrics.eraser_writer import DirectorySink
from tests.e2e.conftest import login
from tests.factories import ProjectFactory, UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

# What each annotator highlights in each text: a run of characters.
TEXTS = {
    "r1": ("这部电影很好看，演员也很出色。", "很好看"),
    "r2": ("剧情拖沓，结尾让人失望。", "让人失望"),
}
SIMILARITY = [
    {
        "sent_id": 1,
        "text_q_seg": list("地瓜是红薯吗"),
        "text_t_seg": list("红薯就是地瓜"),
        "sent_label": 1,
        "rationale_q_idx": [0, 1, 3, 4],
        "rationale_t_idx": [0, 1, 4, 5],
        "sample_type": "ori",
        "rel_ids": [2],
    },
    {
        "sent_id": 2,
        "text_q_seg": list("红薯是地瓜吗"),
        "text_t_seg": list("红薯就是地瓜"),
        "sent_label": 1,
        "rationale_q_idx": [0, 1, 3, 4],
        "rationale_t_idx": [0, 1, 4, 5],
        "sample_type": "disturb",
    },
]


def chinese_user(project, username, *roles):
    user = UserFactory(username=username)
    for role in roles:
        ProjectMembership.objects.create(project=project, user=user, role=role)
    UserPreference.objects.create(user=user, language="zh-hans")
    return user


def open_as(browser, base, username):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(20_000)
    login(page, base, username)
    return page


def upload(page, base, project, path: Path):
    page.goto(f"{base}/projects/{project.id}/data/")
    assert page.inner_text("#import-panel h2") == "导入数据集"
    before = page.locator("#import-jobs tbody tr").count()
    page.set_input_files("#import-form input[name=file]", str(path))
    page.click("#import-form button[type=submit]")
    page.wait_for_function(
        "n => document.querySelectorAll('#import-jobs tbody tr').length > n "
        "&& !document.querySelector('#import-jobs tr[data-status=pending], "
        "#import-jobs tr[data-status=running]')",
        arg=before,
    )
    row = page.locator("#import-jobs tbody tr").first
    assert row.get_attribute("data-status") == "succeeded", row.inner_text()
    assert "已成功" in row.inner_text()


def annotate_served_items(page, base, project):
    """Drag over the chosen characters of every item the annotator is served."""
    page.goto(f"{base}/projects/{project.id}/annotate/")
    stored = {}
    while True:
        page.wait_for_selector("#workspace[data-ready=true]")
        if page.get_attribute("#workspace", "data-done") == "true":
            return stored
        item = page.evaluate("window.rationaleWorkspace.assignment.item.annotation_id")
        text, phrase = TEXTS[item]
        start = text.index(phrase)
        tokens = page.locator(".document .tok")
        assert tokens.count() == len(text), "one token per character"
        assert page.inner_text(".document").strip() == text
        tokens.nth(start).hover()
        page.mouse.down()
        tokens.nth(start + len(phrase) - 1).hover()
        page.mouse.up()
        assert page.locator(".legend-set").all_inner_texts() == [f"集合 1：{len(phrase)} 个词元"]
        assert f"已高亮 {len(phrase)} 个" in page.inner_text(".doc-count")
        submitted = page.get_attribute("#workspace", "data-assignment")
        page.click(".workspace .submit")
        page.wait_for_selector(f"#workspace[data-last-submitted='{submitted}']")
        stored[item] = (start, start + len(phrase))
        page.wait_for_function(
            "id => document.querySelector('#workspace').dataset.assignment !== id "
            "|| document.querySelector('#workspace').dataset.done === 'true'",
            arg=submitted,
        )


def accept_every_annotation(page, base, project, count):
    page.goto(f"{base}/projects/{project.id}/review/")
    for _ in range(count):
        page.wait_for_selector("#review[data-ready=true] .review-form")
        assert page.inner_text(".review-form button[type=submit]") == "提交评分"
        form = page.locator(".review-form")
        form.locator("input[name^=sufficiency-][value='3']").check()
        form.locator("input[name^=compactness-][value='4']").check()
        form.locator("input[name=comprehensiveness][value='3']").check()
        form.locator("textarea[name=comment]").fill("理由准确。")
        annotation = page.get_attribute("#review", "data-annotation")
        form.locator("button[type=submit]").click()
        page.wait_for_selector(".message.ok")
        assert "评分已保存。审核已完成：已接受。" in page.inner_text(".message")
        page.wait_for_function(
            "id => document.querySelector('#review').dataset.annotation !== id "
            "|| document.querySelector('#review').dataset.done === 'true'",
            arg=annotation,
        )


def export_from_the_page(page, base, project, layout) -> dict[str, str]:
    """Export the accepted sets in `layout`; the files of the zip by name."""
    page.goto(f"{base}/projects/{project.id}/results/")
    done = Export.objects.filter(project=project).count()
    page.select_option("select[name=selection]", "accepted")
    page.select_option("select[name=aggregation]", "accepted_sets")
    page.select_option("select[name=layout]", layout)
    page.click("#export-form button[type=submit]")
    page.wait_for_function(
        "n => document.querySelectorAll('#exports tbody tr[data-status=succeeded]').length > n",
        arg=done,
    )
    assert "下载" in page.inner_text("#exports tbody")
    export = Export.objects.filter(project=project).latest("pk")
    with zipfile.ZipFile(Path(settings.MEDIA_ROOT) / export.file_path) as archive:
        return {
            name.split("/", 1)[1]: archive.read(name).decode("utf-8")
            for name in archive.namelist()
            if name.endswith(".jsonl")
        }


def jsonl(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_a_chinese_project_imported_annotated_reviewed_and_exported(browser, live_server, tmp_path):
    base = live_server.url
    project = ProjectFactory(
        name="中文情感",
        task_type=TaskType.CLASSIFICATION,
        language="zh",
        labels=["正面", "负面"],
        annotators_per_item=1,
        reviewers_per_annotation=1,
    )
    InstructionVariant.objects.create(project=project, name="plain", text="标出支持标签的字。")
    chinese_user(project, "guan", Role.ADMIN)
    annotator = chinese_user(project, "biao", Role.ANNOTATOR)
    chinese_user(project, "shen", Role.REVIEWER)
    raw = tmp_path / "senti_zh.jsonl"
    raw.write_text(
        "".join(
            json.dumps({"id": key, "text": text, "label": label, "split": "test"}) + "\n"
            for (key, (text, _)), label in zip(TEXTS.items(), ["正面", "负面"], strict=True)
        ),
        encoding="utf-8",
    )

    # 1. The admin uploads raw Chinese texts: one token per character.
    admin = open_as(browser, base, "guan")
    upload(admin, base, project, raw)
    for key, (text, _) in TEXTS.items():
        assert Document.objects.get(project=project, docid=key).token_texts() == list(text)

    # 2. The annotator drags over characters in both items and submits each.
    annotator_page = open_as(browser, base, "biao")
    stored = annotate_served_items(annotator_page, base, project)
    assert set(stored) == set(TEXTS)
    for key, (start, end) in stored.items():
        annotation = Annotation.objects.get(
            assignment__item__annotation_id=key, assignment__worker=annotator
        )
        (rationale_set,) = RationaleSet.objects.filter(annotation=annotation)
        spans = [(s.document.docid, s.start_token, s.end_token) for s in rationale_set.spans.all()]
        assert spans == [(key, start, end)]
        text, phrase = TEXTS[key]
        assert text[start:end] == phrase

    # 3. The reviewer accepts both on the review page.
    accept_every_annotation(open_as(browser, base, "shen"), base, project, count=2)
    assert list(ReviewVerdict.objects.values_list("outcome", flat=True)) == ["accepted"] * 2

    # 4. ERASER: documents as their characters, evidences on the highlighted ones.
    eraser = export_from_the_page(admin, base, project, "docs.jsonl")
    documents = {line["docid"]: line["document"].split() for line in jsonl(eraser["docs.jsonl"])}
    assert documents == {key: list(text) for key, (text, _) in TEXTS.items()}
    instances = {line["annotation_id"]: line for line in jsonl(eraser["test.jsonl"])}
    for key, (start, end) in stored.items():
        (evidence_set,) = instances[key]["evidences"]
        (evidence,) = evidence_set
        assert (evidence["docid"], evidence["start_token"], evidence["end_token"]) == (
            key,
            start,
            end,
        )
        assert "".join(documents[key][start:end]) == TEXTS[key][1]
    assert {key: line["classification"] for key, line in instances.items()} == {
        "r1": "正面",
        "r2": "负面",
    }

    # 5. The benchmark's format: the characters as sent_token, the rationale as indices.
    benchmark = export_from_the_page(admin, base, project, "benchmark")
    lines = {line["sent_id"]: line for line in jsonl(benchmark["sentiment_zh.jsonl"])}
    for key, (start, end) in stored.items():
        assert lines[key]["sent_token"] == list(TEXTS[key][0])
        assert lines[key]["rationales"] == [list(range(start, end))]
        assert lines[key]["sample_type"] == "ori"


def test_a_chinese_benchmark_file_uploads_with_its_characters_rationales_and_links(
    browser, live_server, tmp_path
):
    base = live_server.url
    project = ProjectFactory(
        name="中文相似度", task_type=TaskType.SENTENCE_PAIR, language="zh", labels=[]
    )
    InstructionVariant.objects.create(project=project, name="plain", text="标出两段文本中的理由。")
    chinese_user(project, "guan", Role.ADMIN)
    path = tmp_path / "sim_zh.jsonl"
    path.write_text(
        "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in SIMILARITY),
        encoding="utf-8",
    )

    upload(open_as(browser, base, "guan"), base, project, path)

    original = Item.objects.get(project=project, annotation_id="1")
    perturbed = Item.objects.get(project=project, annotation_id="2")
    assert perturbed.perturbation_of == original
    assert Document.objects.get(project=project, docid="1:a").token_texts() == list("地瓜是红薯吗")
    assert Document.objects.get(project=project, docid="1:b").text == "红薯就是地瓜"
    spans = [
        (s.document.docid, s.start_token, s.end_token)
        for s in RationaleSet.objects.get(reference_item=original).spans.order_by("position")
    ]
    assert spans == [("1:a", 0, 2), ("1:a", 3, 5), ("1:b", 0, 2), ("1:b", 4, 6)]

    # Both formats give back the characters, the rationales and the link.
    reference = {"selection": "reference", "aggregation": "reference", "archive": "directory"}
    export_build(
        project=project,
        params=export_params_from({**reference, "layout": "benchmark"}),
        sink=DirectorySink(tmp_path / "benchmark"),
    )
    export_build(
        project=project,
        params=export_params_from({**reference, "layout": "docs.jsonl", "splits": "ratios"}),
        sink=DirectorySink(tmp_path / "eraser"),
    )
    lines = jsonl((tmp_path / "benchmark" / "similarity_zh.jsonl").read_text("utf-8"))
    assert [
        {key: line[key] for key in ("sent_id", "text_q_seg", "text_t_seg", "rationale_q_idx")}
        for line in lines
    ] == [
        {key: line[key] for key in ("sent_id", "text_q_seg", "text_t_seg", "rationale_q_idx")}
        for line in SIMILARITY
    ]
    assert lines[0]["rel_ids"] == [2]
    documents = {
        line["docid"]: line["document"].split()
        for line in jsonl((tmp_path / "eraser" / "docs.jsonl").read_text("utf-8"))
    }
    assert documents["1:b"] == list("红薯就是地瓜")
    instances = {
        line["annotation_id"]: line
        for split in ("train", "val", "test")
        for line in jsonl((tmp_path / "eraser" / f"{split}.jsonl").read_text("utf-8"))
    }
    assert instances[2]["perturbation_of"] == 1
    (evidences,) = instances[1]["evidences"]
    assert [
        "".join(documents[e["docid"]][e["start_token"] : e["end_token"]]) for e in evidences
    ] == [
        "地瓜",
        "红薯",
        "红薯",
        "地瓜",
    ]
