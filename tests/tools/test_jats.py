"""JATS full texts: the parser on our own fixture, hostile and empty documents, and the 48 real articles."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from synthesist.appraisal.item_reading import read
from synthesist.errors import ParseError, UnsafeDocumentError
from synthesist.reading.text import section_role, split_sentences
from synthesist.tools import jats
from synthesist.tools.jats import article_evidence, parse_jats, read_jats_file

FIXTURES = Path(__file__).parent / "fixtures"
TRIAL = FIXTURES / "jats_trial.nxml"


def _with_first_section(section: bytes) -> jats.Article:
    """The fixture trial parsed with ``section`` put before the first section of its body."""
    data = TRIAL.read_bytes()
    at = data.index(b"<sec", data.index(b"<body>"))
    return parse_jats(data[:at] + section + data[at:])


def test_identifiers_title_journal_and_year():
    article = parse_jats(TRIAL.read_bytes())

    assert (article.pmid, article.pmcid, article.doi) == ("90000021", "PMC9000021", "10.5555/example.trial.2021")
    assert article.title == "Drug A versus placebo for chronic cough: a randomised, double-blind trial"
    assert article.journal == "Journal of Example Trials" and article.year == 2021 and article.has_body


def test_sections_keep_their_heading_path_and_role():
    passages = parse_jats(TRIAL.read_bytes()).passages
    where = {(p.section, p.role) for p in passages if p.kind == "paragraph"}

    assert ("Abstract › Results", "abstract") in where
    assert ("Patients and methods › Outcomes", "methods") in where
    assert ("Results › Primary outcome", "results") in where
    assert ("Discussion", "discussion") in where


def test_a_table_keeps_caption_header_rows_and_footnotes_and_leaves_the_paragraph():
    passages = parse_jats(TRIAL.read_bytes()).passages
    (table,) = [p for p in passages if p.kind == "table"]

    assert table.label == "Table 2" and table.section == "Results › Primary outcome" and table.role == "results"
    assert table.text.split("\n") == [
        "Table 2 Outcomes at 12 weeks",
        "Outcome | Drug A (n = 116) | Placebo (n = 115) | HR (95% CI)",
        "Cough frequency | 30 | 48 | 0.62 (0.45-0.86)",
        "Night waking | 21 (18%) | 25 (22%) | 0.91 (0.70-1.18)",  # <break/> inside a cell is a space
        "HR, hazard ratio; CI, confidence interval.",
    ]
    paragraph = next(p for p in passages if p.text.startswith("Cough frequency fell"))
    assert paragraph.text == "Cough frequency fell by 40% with drug A."  # the table is its own passage


def test_a_cell_that_spans_rows_is_written_in_each_row_it_spans():
    """An outcome written once beside two arms' rows (``rowspan="2"``: 239 of the 822 Evidence Inference articles
    have such cells) names both rows: the control arm's row read alone, "Control | 1.24±0.33 | 1.14±0.27", was read
    for the next outcome's question (a urinary kallidinogenase trial's Aβ1-40 row answered for Aβ1-42). A span ends
    with its row group, sits at its column however wide the cells before it are, and a span given as no whole
    number is one row."""
    block = (b'<sec><title>Results</title><p>See the table.</p><table-wrap><label>Table 8</label><caption><p>Serum A'
             b'</p></caption><table><thead><tr><th rowspan="2">Marker</th><th colspan="2">Weeks</th></tr><tr><th>0</th>'
             b'<th>4</th></tr></thead><tbody><tr><td rowspan="2">A1-40</td><td>UK</td><td>1.25</td><td>1.01</td></tr>'
             b'<tr><td>Control</td><td>1.24</td><td>1.14</td></tr><tr><td rowspan="x">A1-42</td><td>UK</td>'
             b'<td colspan="2" rowspan="2">0.95</td></tr><tr><td>Control</td></tr></tbody></table></table-wrap></sec>')
    passages = _with_first_section(block).passages
    (table,) = [p.text for p in passages if p.kind == "table" and p.text.startswith("Table 8")]

    assert table.split("\n") == ["Table 8 Serum A",
                                  "Marker | Weeks",
                                  "Marker | 0 | 4",
                                  "A1-40 | UK | 1.25 | 1.01",
                                  "A1-40 | Control | 1.24 | 1.14",
                                  "A1-42 | UK | 0.95",
                                  "Control | 0.95"]


def test_a_rule_row_under_a_spanning_cell_is_no_line_and_an_odd_span_is_one_row():
    """A row that holds only a rule (``<hr/>``) stays out of the text though a cell above spans it ("Characteristic
    |  | χ2df (P)" was written between a header's two rows), and a span it passes on still counts it; a span that is
    no whole number in ASCII digits ("²", which ``str.isdigit`` passes and ``int`` refuses) is one row."""
    from xml.etree.ElementTree import fromstring  # noqa: PLC0415 — the test's own small table

    ruled = fromstring('<table-wrap><table><thead><tr><th rowspan="3">Characteristic</th><th>Arm</th></tr>'
                       '<tr><th><hr/></th></tr><tr><th>No.</th></tr></thead></table></table-wrap>')
    odd = fromstring('<table-wrap><table><tbody><tr><td rowspan="\u00b2">S</td><td>1</td></tr><tr><td>2</td></tr>'
                     '</tbody></table></table-wrap>')

    assert jats.table_text(ruled).split("\n") == ["Characteristic | Arm", "Characteristic | No."]
    assert jats.table_text(odd).split("\n") == ["S | 1", "2"]


def test_figure_captions_are_kept_and_references_and_acknowledgements_are_not():
    passages = parse_jats(TRIAL.read_bytes()).passages
    texts = " ".join(p.text for p in passages)

    assert any(p.kind == "figure" and p.text == "Cough frequency over 12 weeks." for p in passages)
    assert "Smith J" not in texts and "We thank the patients" not in texts


def test_article_evidence_carries_the_passages_and_the_abstract_as_content():
    evidence = article_evidence(parse_jats(TRIAL.read_bytes()), "library")

    assert evidence.id == "pmid:90000021" and evidence.identifiers.pmcid == "PMC9000021"
    assert evidence.content.startswith("BACKGROUND: Chronic cough has few treatments.\nMETHODS: We randomly")
    assert len(evidence.passages) == 11 and evidence.url == "https://pmc.ncbi.nlm.nih.gov/articles/PMC9000021/"


def test_a_structured_abstract_keeps_its_labels_so_its_conclusion_is_not_the_funding_line(shared_dir: Path):
    """CONSTRUCT's abstract (Lancet style) ends "Interpretation", then "Funding": labelled as PubMed labels a
    structured abstract, the readers take the interpretation as the conclusion, not the funder's name."""
    construct = shared_dir / "corpus" / "rct_fulltext" / "articles" / "PMC4994668.nxml"
    evidence = article_evidence(read_jats_file(construct), "library")

    sentences = split_sentences(evidence.content)

    assert [s.text for s in sentences if s.is_conclusion] == [
        "There was no significant difference between ciclosporin and infliximab in clinical effectiveness."]
    assert (sentences[-1].section, sentences[-1].text) == ("FUNDING", "NIHR Health Technology Assessment programme.")


@pytest.mark.parametrize(("title", "role"), [("Patients and Methods", "methods"), ("RESULTS", "results"),
                                             ("Statistical analysis", "methods"), ("Conclusions", "conclusions"),
                                             ("Case presentation", "other")])
def test_section_role(title: str, role: str):
    assert section_role(title) == role


def test_an_article_without_a_body_keeps_its_abstract():
    data = TRIAL.read_bytes()
    start, end = data.index(b"<body>"), data.index(b"</body>") + len(b"</body>")
    article = parse_jats(data[:start] + data[end:])

    assert not article.has_body and {p.role for p in article.passages} == {"abstract"}


def test_an_article_printed_without_an_abstract_is_read_by_its_introduction_and_its_own_conclusions():
    """89 of the 3,632 Evidence Inference articles have no abstract: their content was their first three passages,
    so the introduction was read as the trial's conclusion ("Dyslipidaemia during pregnancy is associated with …
    preterm birth [11]" answered yes to whether exercise in pregnancy raises that risk). With a section of
    conclusions, the content is the introduction's first paragraph and those conclusions, labelled as PubMed labels
    an abstract's; without one, the first three passages as before."""
    data = TRIAL.read_bytes()
    start, end = data.index(b"<abstract"), data.index(b"</abstract>") + len(b"</abstract>")
    bare = data[:start] + data[end:]
    at = bare.index(b"</body>")
    concluded = bare[:at] + b"<sec><title>Conclusion</title><p>Exercise was safe.</p></sec>" + bare[at:]

    with_conclusions = article_evidence(parse_jats(concluded), "library")
    without = article_evidence(parse_jats(bare), "library")
    opening = next(p.text for p in with_conclusions.passages if p.role == "introduction")

    assert not with_conclusions.has_abstract
    assert with_conclusions.content == f"BACKGROUND: {opening}\nCONCLUSIONS: Exercise was safe."
    assert [s.section for s in split_sentences(with_conclusions.content)][-1] == "CONCLUSIONS"
    assert without.content == "\n".join(p.text for p in without.passages[:3])


def test_a_list_or_a_boxed_statement_inside_a_paragraph_is_read_apart_and_never_run_into_its_text():
    """JATS lets a paragraph hold a list, or a statement with its own title and paragraphs (207 of the 822 Evidence
    Inference articles do); read as inline text, "Response to Exercise" ran into "There were no TRT effects …"
    (PMC3423952's "Response to ExerciseThere", then named as an outcome) and each list item into the next."""
    block = (b'<sec><title>Results</title><p>Both trials ran.\n<statement><title>Response to Exercise</title>'
             b'<p>There were no TRT effects (P &gt; 0.05).</p><p>A main effect of exercise was seen.</p></statement>'
             b'</p><p>Criteria:<list><list-item><p>age 18 or over</p></list-item><list-item><p>KRAS exon 2'
             b'</p></list-item></list> were met.</p><table-wrap><label>Table 9</label><table><tr><td>Inclusion:'
             b'<list><list-item><p>exon 2 (12/13)</p></list-item><list-item><p>exon 3</p></list-item></list></td>'
             b'</tr></table></table-wrap></sec>')
    passages = _with_first_section(block).passages
    said = [(p.section, p.text) for p in passages if p.kind == "paragraph" and p.section.startswith("Results")][:6]
    (table,) = [p.text for p in passages if p.kind == "table" and p.text.startswith("Table 9")]

    assert said == [("Results", "Both trials ran."),
                    ("Results › Response to Exercise", "There were no TRT effects (P > 0.05)."),
                    ("Results › Response to Exercise", "A main effect of exercise was seen."),
                    ("Results", "Criteria: were met."),
                    ("Results", "age 18 or over"),
                    ("Results", "KRAS exon 2")]
    assert "Inclusion: exon 2 (12/13) exon 3" in table


def test_a_paragraph_listing_the_key_words_is_no_passage():
    """A journal may print the key words as the abstract's last paragraph (PMC5116111, inside its Conclusions): read
    as a sentence, "Key words: … postoperative wound healing …" answered whether the trial's gel improves wound
    healing."""
    data = TRIAL.read_bytes()
    end = data.index(b"</abstract>")
    listed = b"<p>\n<bold>Key words:</bold>Impacted lower third molar, postoperative wound healing.</p>"
    emphasised = b"<p><bold>Key</bold> findings held in both groups.</p>"
    more = b"<p><bold>Keywords:</bold> gel <bold>Conclusion:</bold> The gel healed wounds.</p>"
    singular = b"<p><bold>Keyword</bold> analysis showed a theme.</p>"
    passages = parse_jats(data[:end] + listed + emphasised + more + singular + data[end:]).passages
    said = [p.text for p in passages if p.role == "abstract"]

    assert not any("Impacted lower third molar" in text for text in said)
    assert "Key findings held in both groups." in said
    assert any("The gel healed wounds." in text for text in said)  # more than the terms: read
    assert any("analysis showed a theme" in text for text in said)


def test_paragraphs_before_the_first_section_are_the_untitled_introduction():
    """Many journals print the introduction as paragraphs outside any section, before "Methods": read as "other",
    its sentences on earlier studies ("water may increase the skin surface pH from 5.5 to 7.5 (Tsai & Maibach,
    1999)") were ranked as a trial's own results. Before an "Introduction" such paragraphs stay "other"."""
    data = TRIAL.read_bytes()
    at = data.index(b"<body>") + len(b"<body>")
    loose = b"<p>Water may raise the skin surface pH (Tsai &amp; Maibach, 1999).</p>"
    before_methods = parse_jats(data[:at] + loose + b"<sec><title>Methods</title><p>How.</p></sec>"
                                + data[at:]).passages
    before_introduction = parse_jats(data[:at] + loose + data[at:]).passages  # the fixture's first: Introduction

    (read,) = [p for p in before_methods if p.text.startswith("Water may raise")]
    (kept,) = [p for p in before_introduction if p.text.startswith("Water may raise")]
    assert (read.section, read.role) == ("Body", "introduction")
    assert (kept.section, kept.role) == ("Body", "other")


def test_a_section_between_the_introduction_and_the_methods_is_background():
    """A trial's protocol reviewed earlier trials in sections of their own between its introduction and its methods
    ("AMI stem cell therapy in man"); read as "other", "The LATE TIME study … showed no improvement in LVEF" answered
    a question as the protocol's own finding. Such a section is background; one after the methods keeps its role."""
    data = TRIAL.read_bytes()
    methods = data.index(b'<sec id="s2">')  # the fixture's body: Introduction, Patients and methods, Results, …
    review = b"<sec><title>AMI stem cell therapy in man</title><p>The LATE TIME study showed no improvement.</p></sec>"
    discussion = data.index(b'<sec id="s4">')
    later = b"<sec><title>Harms in practice</title><p>Two patients bled.</p></sec>"
    passages = parse_jats(data[:methods] + review + data[methods:discussion] + later + data[discussion:]).passages

    (earlier,) = [p for p in passages if p.text.startswith("The LATE TIME")]
    (after,) = [p for p in passages if p.text == "Two patients bled."]
    assert (earlier.section, earlier.role) == ("AMI stem cell therapy in man", "introduction")
    assert (after.section, after.role) == ("Harms in practice", "other")


def test_a_table_outside_any_section_belongs_to_the_section_that_first_cites_it():
    """Where the file puts a table is the publisher's layout (a ``<floats-group>`` at the end: 414 of the 2,405
    tables of the Evidence Inference train and validation trials), where the text first cites it is the article's:
    a results table read as "other" was ranked as no result. A table no paragraph cites stays in the body."""
    data = TRIAL.read_bytes()
    results = data.index(b"<p>", data.index(b"<title>Results</title>", data.index(b"<body>")))
    cite = b'<p>Rates are in <xref ref-type="table" rid="t7">Table 7</xref>.</p>'
    floats = (b'<floats-group><table-wrap id="t7"><label>Table 7</label><table><tr><td>Nausea</td><td>4</td></tr>'
              b'</table></table-wrap><table-wrap id="t8"><label>Table 8</label><table><tr><td>Age</td><td>61</td>'
              b'</tr></table></table-wrap></floats-group>')
    end = data.index(b"</body>") + len(b"</body>")
    passages = parse_jats(data[:results] + cite + data[results:end] + floats + data[end:]).passages

    tables = {p.label: (p.section, p.role) for p in passages if p.kind == "table"}
    assert tables["Table 7"][1] == "results" and tables["Table 7"][0].startswith("Results")
    assert tables["Table 8"] == ("Body", "other")


def test_citations_side_by_side_are_read_apart():
    """Journals print adjacent citation links with a comma between them; the file often has nothing there (453 of the
    822 Evidence Inference trials). Read together, "[<xref>21</xref><xref>22</xref><xref>23</xref>]" was "[212223]", a
    count of 212,223 people that the count model scored and a quote printed."""
    data = TRIAL.read_bytes()
    results = data.index(b"<p>", data.index(b"<title>Results</title>", data.index(b"<body>")))
    cited = (b'<p>Oral GCV was given for 8 weeks.[<xref ref-type="bibr" rid="r21">21</xref><xref ref-type="bibr" '
             b'rid="r22">22</xref><xref ref-type="bibr" rid="r23">23</xref>] Rates fell <xref ref-type="bibr" '
             b'rid="r4">4</xref>, <xref ref-type="bibr" rid="r5">5</xref>.</p>')
    passages = parse_jats(data[:results] + cited + data[results:]).passages

    (read,) = [p.text for p in passages if p.text.startswith("Oral GCV")]
    assert read == "Oral GCV was given for 8 weeks.[21,22,23] Rates fell 4, 5."


def test_a_superscript_glued_to_the_next_word_is_read_apart_from_it():
    """A unit's power or a charge written after a word, with no space before the next word in the file (86 of the
    3,632 Evidence Inference articles): read as it stood, "100 mg m<sup>−2</sup>cisplatin" gave "m−2cisplatin", and an
    article of cisplatin against cisplatin with interferon never held "cisplatin". A superscript that opens a word
    after a space (an isotope's mass) stays with it."""
    data = TRIAL.read_bytes()
    results = data.index(b"<p>", data.index(b"<title>Results</title>", data.index(b"<body>")))
    glued = ("<p>Women received 100 mg m<sup>\u22122</sup>cisplatin and CD4<sup>+</sup>T cells were counted; the "
             "<sup>13</sup>C-urea breath test and 10<sup>9</sup>/L.</p>").encode()
    passages = parse_jats(data[:results] + glued + data[results:]).passages

    (read,) = [p.text for p in passages if p.text.startswith("Women received")]
    assert read == ("Women received 100 mg m\u22122 cisplatin and CD4+ T cells were counted; the 13C-urea breath "
                    "test and 109/L.")


@pytest.mark.parametrize(("body", "reason"), [
    (b"", "empty document"),
    (b"<article><front><article-meta/></front></article>", "article without an abstract or a body"),
    (b"<pmc-articleset/>", "not a JATS article"),
    (b"<article><body><p>x</p>", "malformed XML"),
    (b"<article><body><p>text</p></body></article>", "no <front>/<article-meta>"),
])
def test_documents_that_are_not_readable_articles_are_refused_with_a_reason(body: bytes, reason: str):
    with pytest.raises(ParseError) as caught:
        parse_jats(body)
    assert reason in caught.value.message


def test_entities_are_refused():
    with pytest.raises(UnsafeDocumentError):
        parse_jats((FIXTURES / "billion_laughs.xml").read_bytes())


def test_a_document_over_the_cap_is_refused_before_parsing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(jats, "MAX_BYTES", 1000)
    big = tmp_path / "big.nxml"
    big.write_bytes(TRIAL.read_bytes())

    with pytest.raises(ParseError, match="over the 1,000-byte cap"):
        read_jats_file(big)
    with pytest.raises(ParseError, match="over the 1,000-byte cap"):
        parse_jats(big.read_bytes())


# --- layer 2: the real articles ---------------------------------------------------------------------------------


def real_articles(shared_dir: Path) -> list[Path]:
    return sorted([*(shared_dir / "corpus" / "rct_fulltext" / "articles").glob("*.nxml"),
                   *(shared_dir / "fixtures" / "fulltext").glob("*.nxml")])


def test_the_48_real_articles_parse_except_the_empty_file(shared_dir: Path):
    files = real_articles(shared_dir)
    started = time.perf_counter()
    parsed, refused = {}, {}
    for path in files:
        try:
            parsed[path.name] = read_jats_file(path)
        except ParseError as exc:
            refused[path.name] = exc.message
    print(f"{len(files)} articles parsed in {time.perf_counter() - started:.2f}s")  # the figure lives in bench/

    assert len(files) == 48
    assert refused == {"PMC3086034.nxml": "empty document"}  # a 0-byte file in the corpus
    assert sum(a.has_body for a in parsed.values()) == 45  # two are abstract-only in PMC
    assert all(a.pmcid and a.title and a.abstract for a in parsed.values())
    hazard = parsed["PMC3442969.nxml"]
    table5 = next(p for p in hazard.passages if p.kind == "table" and p.label == "Table 5")
    assert "WT | 24.2months | 18.9months | 0.31" in table5.text.split("\n")


def test_a_protocol_is_typed_so_and_reports_nothing_yet():
    """A journal's heading "Protocol" types the article (JMIR's research protocols have results and conclusions
    parts: "Data analysis is in progress"; "This program may lead to increased condom use" was read as a yes in a
    user check, 2026-12-06): it reports nothing yet. A heading that names no protocol is not kept."""
    data = TRIAL.read_bytes()
    at = data.index(b"<article-meta>") + len(b"<article-meta>")
    heading = b'<article-categories><subj-group subj-group-type="heading"><subject>{}</subject></subj-group>' \
              b"</article-categories>"
    protocol = article_evidence(parse_jats(data[:at] + heading.replace(b"{}", b"Protocol") + data[at:]), "library")
    research = article_evidence(parse_jats(data[:at] + heading.replace(b"{}", b"Research Article") + data[at:]),
                                "library")

    assert protocol.publication_types == ("Protocol",) and read(protocol).plans_only
    assert research.publication_types == () and not read(research).plans_only


def test_methods_nested_in_the_background_are_methods_and_so_is_what_follows_them():
    """Some articles nest their methods in their background section ("Background › Methods › Study design": a hand-rub
    trial's products were named only there, read as its introduction, 2026-12-07): a subsection of an introduction
    whose title names a later part begins that part; the introduction's own paragraphs and subsections before it stay
    the introduction."""
    nested = (b"<sec><title>Background</title><p>Hand rubs may dry the skin.</p>"
              b"<sec><title>Safety of hand rubs in earlier trials</title><p>Rubs were compared before.</p></sec>"
              b"<sec><title>Methods</title><p>Volunteers were randomised to two rubs.</p></sec>"
              b"<sec><title>Skin measurements</title><p>Water loss was measured.</p></sec>"
              b"<sec><title>Results</title><p>Water loss was lower with the first rub.</p></sec></sec>")
    passages = _with_first_section(nested).passages

    roles = {p.text: p.role for p in passages}
    assert roles["Hand rubs may dry the skin."] == "introduction"
    assert roles["Rubs were compared before."] == "introduction"  # a topic's long title, not a part's
    assert roles["Volunteers were randomised to two rubs."] == "methods"
    assert roles["Water loss was measured."] == "methods"
    assert roles["Water loss was lower with the first rub."] == "results"
