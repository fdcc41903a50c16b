// The data manager's view as a query string and back, the column layout a user keeps,
// and what a bulk action is sent for.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  bulkTarget,
  columnLayout,
  emptyState,
  filterCount,
  moveColumn,
  nextOrdering,
  queryFromState,
  rangeProblem,
  sameFilter,
  sortDirection,
  stateFromQuery,
  withoutFilter,
} from "../../../frontend/static/frontend/data_query.js";

describe("the query string", () => {
  test("round-trips every kind of filter in a fixed order", () => {
    const query = "search=good+film&status=in_review%2Crevising&variant=3&flag=any&perturbation=original"
      + "&kappa_min=0.2&kappa_max=0.8&submitted_min=1&last_activity_after=2026-01-01T00%3A00"
      + "&ordering=-kappa&page=3&page_size=100";
    const state = stateFromQuery(query);

    assert.equal(state.search, "good film");
    assert.deepEqual(state.sets, { status: ["in_review", "revising"], variant: ["3"], flag: ["any"] });
    assert.deepEqual(state.ranges, { kappa: { min: "0.2", max: "0.8" }, submitted: { min: "1", max: "" } });
    assert.deepEqual(state.dates, { last_activity: { after: "2026-01-01T00:00", before: "" } });
    assert.deepEqual(state.choices, { perturbation: "original" });
    assert.equal(state.ordering, "-kappa");
    assert.equal(state.page, 3);
    assert.equal(state.pageSize, 100);
    assert.deepEqual(stateFromQuery(queryFromState(state)), state);
  });

  test("keeps the curation filter, stale gold among it", () => {
    const state = stateFromQuery("curation=stale&perturbation=perturbed");

    assert.deepEqual(state.choices, { perturbation: "perturbed", curation: "stale" });
    assert.equal(queryFromState(state), "perturbation=perturbed&curation=stale");
    assert.deepEqual(withoutFilter(state, "curation").choices, { perturbation: "perturbed" });
  });

  test("leaves out defaults, and the page for a saved view", () => {
    const state = stateFromQuery("?status=gold&page=2");
    assert.equal(queryFromState(state), "status=gold&page=2");
    assert.equal(queryFromState(state, { page: false }), "status=gold");
    assert.equal(queryFromState(emptyState()), "");
  });

  test("keeps the page's own view parameter apart from the API's", () => {
    const state = stateFromQuery("label=pos&view=7");
    assert.equal(state.view, "7");
    assert.equal(queryFromState(state), "label=pos");
    assert.equal(queryFromState(state, { viewParam: true }), "label=pos&view=7");
  });

  test("ignores unknown parameters, empty lists and bad page numbers", () => {
    const state = stateFromQuery("colour=red&status=&page=-4&page_size=x");
    assert.deepEqual(state, emptyState());
  });

  test("two views filter alike whatever their page", () => {
    assert.ok(sameFilter(stateFromQuery("split=test&page=4"), stateFromQuery("split=test")));
    assert.ok(!sameFilter(stateFromQuery("split=test"), stateFromQuery("split=val")));
  });
});

describe("filters", () => {
  test("are counted, the search as one", () => {
    assert.equal(filterCount(stateFromQuery("search=x&label=a,b&f1_max=0.5")), 3);
  });

  test("one removed sends the view back to its first page", () => {
    const next = withoutFilter(stateFromQuery("label=a&split=test&page=5"), "label");
    assert.equal(queryFromState(next), "split=test");
  });

  test("a range with min above max, or not a number, is named", () => {
    assert.equal(rangeProblem("0.9", "0.1"), "order");
    assert.equal(rangeProblem("x", ""), "min");
    assert.equal(rangeProblem("", "1e"), "max");
    assert.equal(rangeProblem("0.1", "0.1"), null);
    assert.equal(rangeProblem("", ""), null);
  });
});

describe("sorting by a header", () => {
  test("goes ascending, descending, unsorted; another column starts over", () => {
    assert.equal(nextOrdering("", "kappa"), "kappa");
    assert.equal(nextOrdering("kappa", "kappa"), "-kappa");
    assert.equal(nextOrdering("-kappa", "kappa"), "");
    assert.equal(nextOrdering("-kappa", "f1"), "f1");
    assert.equal(sortDirection("-kappa", "kappa"), "descending");
    assert.equal(sortDirection("-kappa", "f1"), "none");
  });
});

describe("the column layout", () => {
  const all = ["id", "split", "label", "status", "kappa"];

  test("is the default without a kept one", () => {
    assert.deepEqual(columnLayout(null, all, ["kappa"]), { order: all, hidden: ["kappa"] });
  });

  test("keeps the user's order, appends new columns and drops gone ones", () => {
    const layout = columnLayout({ order: ["status", "id", "gone", "label"], hidden: ["label", "gone"] }, all, ["kappa"]);
    assert.deepEqual(layout.order, ["status", "id", "label", "split", "kappa"]);
    assert.deepEqual(layout.hidden, ["label", "kappa"]);
  });

  test("moves a column within the row", () => {
    assert.deepEqual(moveColumn(all, "label", -1), ["id", "label", "split", "status", "kappa"]);
    assert.deepEqual(moveColumn(all, "id", -1), all);
    assert.deepEqual(moveColumn(all, "kappa", 1), all);
  });
});

describe("a bulk action's target", () => {
  test("is the ids chosen, or the whole filter without its page", () => {
    const state = stateFromQuery("status=complete&page=3");
    assert.deepEqual(bulkTarget({ allMatching: false, ids: new Set([9, 2]) }, state), { ids: [2, 9] });
    assert.deepEqual(bulkTarget({ allMatching: true, ids: [] }, state), { filter: "status=complete" });
  });
});
