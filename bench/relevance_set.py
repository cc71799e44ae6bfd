"""The judged set of ``bench/relevance.py``: listings over every category, queries and graded judgments.

Run ``python bench/relevance_set.py`` to rewrite ``bench/relevance_set.json`` (deterministic: a
fixed seed); the JSON is committed and is what the benchmark reads.

How the set is built:

* **Listings** (315): 35 topics (a kind of job, home, mentoring or co-founder search), 9 listings
  each, in their category. A listing's title is one of its topic's titles (singulars, plurals,
  derived forms and accented words as people write them) and its description two or three of
  the topic's sentences plus one sentence common to the category; its place is one of
  :data:`CITIES` (accented names included). Some sentences mention a neighbouring topic
  ("we also use Python for tooling"), as real listings do.
* **Judgments** are made on the listings' *topics and places*, never by running a search engine:
  a query states what the seeker looks for (:class:`Query`: the topics that answer it fully,
  grade 2, those that answer it in part, grade 1, and optionally a place that must match); every
  listing of another topic is 0. So the judgments do not favour one engine's matching rules.
* **Query classes**: ``plural`` (singular and plural forms), ``derived`` (derived forms:
  engineering / engineer), ``typo1`` (one typo), ``typo2`` (two typos in a long word), ``prefix``
  (a word being typed), ``accent`` (without the accents the listings use), ``multi`` (two or three
  words), ``none`` (nothing in the set answers them). A typo query also names the words it
  misspells (``spelt``), which ``bench/relevance.py`` asks as well, for reference.
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass, field
from pathlib import Path

OUT = Path(__file__).resolve().parent / "relevance_set.json"
PER_TOPIC = 9

#: name, lat, lng (accented names on purpose: the accent queries ask for them without).
CITIES = [
    ("Berlin", 52.52, 13.405), ("München", 48.137, 11.575), ("Zürich", 47.377, 8.541), ("Köln", 50.938, 6.96),
    ("Málaga", 36.721, -4.421), ("São Paulo", -23.55, -46.633), ("Paris", 48.857, 2.352), ("Wien", 48.208, 16.373),
    ("Amsterdam", 52.37, 4.895), ("Lisbon", 38.722, -9.139),
]


@dataclass
class Topic:
    """A kind of listing: its category, titles and description sentences."""

    key: str
    category: str
    titles: list[str]
    sentences: list[str]


T = Topic
TOPICS = [
    # --- jobs (hiring) ---
    T("python_dev", "jobs", ["Senior Python engineers wanted", "Python developer (Django)", "Backend engineer, Python",
                             "Python developers for our API team", "Junior Python developer"],
      ["You will build APIs in Python and Django.", "Our engineering team ships backend services every day.",
       "Experience with PostgreSQL and asyncio is a plus.", "We develop data pipelines in Python.",
       "You write tests and review code with the other developers."]),
    T("rust_dev", "jobs", ["Rust systems engineer", "Embedded Rust developer", "Rust engineers for a database team",
                           "Backend developer (Rust)"],
      ["You will work on a storage engine written in Rust.", "Low-latency networking and async Rust.",
       "Our engineers care about memory safety and performance.", "Some tooling is written in Python."]),
    T("frontend_dev", "jobs", ["Frontend developer (React)", "JavaScript engineer", "React and TypeScript developers",
                               "Web developer, frontend"],
      ["You build user interfaces with React and TypeScript.", "Accessibility and performance matter to us.",
       "You work closely with our product designers.", "Our web app serves millions of users."]),
    T("data_scientist", "jobs", ["Data scientist", "Senior data scientists", "Machine learning scientist",
                                 "Data scientist for forecasting"],
      ["You build statistical models and machine learning pipelines.", "Python, pandas and SQL every day.",
       "You present insights to the product teams.", "Experience with experimentation and A/B testing."]),
    T("devops", "jobs", ["DevOps engineer (Kubernetes)", "Site reliability engineer", "Cloud infrastructure engineer",
                         "Platform engineers, Kubernetes and Terraform"],
      ["You run our Kubernetes clusters on AWS.", "Infrastructure as code with Terraform.",
       "On-call rotation with a blameless culture.", "Monitoring with Prometheus and Grafana."]),
    T("designer", "jobs", ["Product designer", "UX designer", "UI/UX design lead", "Senior product designers"],
      ["You design flows, prototypes and user research.", "Figma is our main design tool.",
       "You work with engineers and product managers.", "A portfolio with case studies is required."]),
    T("nurse", "jobs", ["Registered nurse", "Nursing assistant", "Nurses for night shifts", "Pediatric nurse"],
      ["You care for patients on a busy ward.", "Shifts are planned a month ahead.",
       "Nursing qualification recognised in the country.", "A friendly team of doctors and nurses."]),
    T("barista", "jobs", ["Barista", "Café barista, part time", "Head barista for specialty coffee", "Baristas wanted"],
      ["You prepare espresso and filter coffee.", "Our café roasts its own beans.",
       "Latte art is appreciated but not required.", "Weekend shifts at the coffee bar."]),
    T("accountant", "jobs", ["Accountant", "Accounting assistant", "Senior accountants", "Accountant for a small firm"],
      ["You prepare monthly accounts and tax returns.", "Accounting software experience is expected.",
       "You work with our clients' bookkeeping.", "Payroll and invoicing are part of the role."]),
    T("teacher", "jobs", ["Mathematics teacher", "Teaching assistant", "Language teachers", "Primary school teacher"],
      ["You teach small classes.", "Lesson planning with a supportive team.",
       "Teaching experience with children is required.", "School holidays included."]),
    T("electrician", "jobs", ["Electrician", "Electrical technician", "Electricians for installations",
                              "Service electrician"],
      ["You install and repair electrical systems.", "Certified electrical training required.",
       "Work on residential and commercial buildings.", "A company van is provided."]),
    T("marketing", "jobs", ["Marketing manager", "Digital marketer", "Content marketing specialist",
                            "Performance marketing manager"],
      ["You plan campaigns across social and search.", "Marketing analytics and budgets.",
       "You write content for our blog and newsletter.", "Work with sales on lead generation."]),
    # --- housing (offering) ---
    T("room", "housing", ["Furnished room in shared flat", "Bright room near the park", "Rooms in a student residence",
                          "Room in a friendly flatshare"],
      ["The room is furnished with a bed and a desk.", "Shared kitchen and bathroom.",
       "Flatmates are students and young professionals.", "Bills and internet included."]),
    T("apartment", "housing", ["Two-bedroom apartment", "Spacious apartments with balcony", "Modern apartment near the station",
                               "Apartment with garden view"],
      ["The apartment has two bedrooms and a living room.", "Fully equipped kitchen.",
       "Close to public transport and shops.", "Long-term rental preferred."]),
    T("studio", "housing", ["Cosy studio", "Studio apartment in the old town", "Studios for single tenants",
                            "Small studio with kitchenette"],
      ["A compact studio with a kitchenette.", "Ideal for one person.",
       "Quiet street in the old town.", "Laundry in the building."]),
    T("house", "housing", ["Family house with garden", "Houses for rent near schools", "Detached house",
                           "Townhouse with terrace"],
      ["Three bedrooms and a large garden.", "Garage and storage included.",
       "Quiet neighbourhood close to schools.", "Pets are welcome."]),
    T("office", "housing", ["Office space for startups", "Coworking desks", "Private office in a coworking space",
                            "Shared office for small teams"],
      ["Desks with fast internet and meeting rooms.", "Coffee and printing included.",
       "A community of founders and freelancers.", "Flexible monthly contracts."]),
    T("parking", "housing", ["Garage parking space", "Parking spot near the centre", "Underground parking spaces",
                             "Covered car parking"],
      ["A secure underground space for one car.", "Access by remote control.",
       "Monthly rent, cancellable any time.", "Close to the main station."]),
    # --- mentoring (mentor) ---
    T("python_mentor", "mentoring", ["Python developer mentoring", "Mentoring for Python beginners",
                                     "Learn Python with a senior engineer", "Python mentor for career changers"],
      ["Weekly sessions on Python and testing.", "I review your code and projects.",
       "From scripts to web applications in Python.", "I have mentored junior developers for years."]),
    T("data_mentor", "mentoring", ["Mentoring in data science", "Data science mentor", "Machine learning mentoring",
                                   "Data scientists mentoring juniors"],
      ["We work on statistics, machine learning and projects.", "Portfolio reviews for data roles.",
       "Python and SQL practice sessions.", "Interview preparation for data scientists."]),
    T("career_mentor", "mentoring", ["Career coaching for engineers", "Career mentor", "Career change mentoring",
                                     "Coaching for job interviews"],
      ["We plan your next career step together.", "CV and interview preparation.",
       "Salary negotiation practice.", "Sessions by video call."]),
    T("startup_mentor", "mentoring", ["Engineering mentor for startups", "Startup mentoring for founders",
                                      "Mentor for early-stage startups", "Fundraising mentoring"],
      ["I advise founders on product and hiring.", "Pitch deck reviews before fundraising.",
       "Building an engineering team from scratch.", "Monthly sessions with your founding team."]),
    T("ux_mentor", "mentoring", ["UX design mentoring", "Design mentor for portfolio reviews", "Mentoring product designers",
                                 "UI design mentor"],
      ["Portfolio and case study reviews.", "User research and prototyping practice.",
       "Feedback on your design work in Figma.", "Preparing for design interviews."]),
    T("cafe_mentor", "mentoring", ["Café owner mentoring in Zürich", "Mentoring for restaurant and café owners",
                                   "Hospitality mentor", "Coffee shop business mentoring"],
      ["Twenty years running cafés and restaurants.", "Menus, staff planning and suppliers.",
       "Opening your own café step by step.", "Cost control for hospitality businesses."]),
    T("leadership_mentor", "mentoring", ["Leadership coaching for new managers", "Engineering management mentor",
                                         "Mentoring team leads", "Leadership mentor"],
      ["From engineer to manager: the first year.", "One-on-ones, feedback and hiring.",
       "Leading remote teams.", "Coaching sessions every two weeks."]),
    T("language_mentor", "mentoring", ["German conversation mentor", "Language exchange mentoring", "Spanish tutor and mentor",
                                       "English conversation practice"],
      ["Conversation practice for everyday life.", "Grammar explained simply.",
       "Preparation for language certificates.", "Sessions in a café or online."]),
    T("photo_mentor", "mentoring", ["Photography mentor", "Mentoring for wedding photographers", "Photo editing mentoring",
                                    "Street photography mentor"],
      ["Lighting, composition and editing.", "Portfolio reviews and client work.",
       "Lightroom and retouching practice.", "Photo walks in the city."]),
    T("music_mentor", "mentoring", ["Music production mentor", "Guitar mentoring", "Songwriting mentor", "Piano mentoring"],
      ["Sessions on composition and arrangement.", "Recording at home.", "Practice plans for every week.",
       "Preparing for your first concerts."]),
    # --- cofounders (founder) ---
    T("tech_cofounder", "cofounders", ["Technical co-founder for fintech startup", "CTO co-founder wanted",
                                       "Technical cofounder (payments)", "Engineering co-founder for B2B software"],
      ["We are looking for a technical co-founder to build the product.", "Payments and banking APIs.",
       "Equity split to be agreed.", "You will lead engineering from day one."]),
    T("marketing_cofounder", "cofounders", ["Marketing co-founder", "Growth co-founder for consumer app",
                                            "Cofounder for sales and marketing", "Commercial co-founder"],
      ["You will own growth, marketing and sales.", "We have a working prototype.",
       "Experience with consumer brands helps.", "Equity and a shared vision."]),
    T("ai_cofounder", "cofounders", ["Co-founder for AI startup", "Machine learning co-founder",
                                     "AI cofounder for document automation", "Cofounder with machine learning skills"],
      ["We automate documents with machine learning.", "You build models and the data pipeline.",
       "Pilot customers are waiting.", "Python and large language models."]),
    T("climate_cofounder", "cofounders", ["Climate tech co-founder", "Co-founder for renewable energy startup",
                                          "Cofounder for solar installations", "Sustainability startup cofounder"],
      ["We help households install solar panels.", "Renewable energy and heat pumps.",
       "Grant funding secured for the first year.", "Looking for an operations-minded partner."]),
    T("health_cofounder", "cofounders", ["Healthcare startup co-founder", "Digital health cofounder",
                                         "Co-founder for a telemedicine app", "Medical cofounder"],
      ["We connect patients with doctors online.", "Regulatory and clinical experience welcome.",
       "Nurses and doctors are our first users.", "Seed funding in progress."]),
    T("food_cofounder", "cofounders", ["Co-founder for specialty coffee brand", "Food startup cofounder",
                                       "Co-founder for a bakery chain", "Cofounder for plant-based snacks"],
      ["We roast coffee and sell online.", "Retail partnerships with cafés.",
       "Product development and branding.", "Looking for an operations co-founder."]),
    T("edtech_cofounder", "cofounders", ["Edtech co-founder", "Co-founder for a learning platform",
                                         "Cofounder for language learning app", "Education startup cofounder"],
      ["We build a learning platform for schools.", "Teachers are our design partners.",
       "Content and curriculum experience welcome.", "Pre-seed funding raised."]),
]

#: One sentence common to each category, added to every description of the category.
COMMON = {
    "jobs": ["Competitive salary and flexible hours.", "Hybrid work is possible.", "Apply with a short letter."],
    "housing": ["Available from next month.", "Viewings on weekends.", "Deposit of two months."],
    "mentoring": ["First session free.", "Sessions in English.", "Flexible scheduling."],
    "cofounders": ["We met at an accelerator.", "Based in Europe, remote friendly.", "Let's talk over coffee."],
}

#: The fixed meta of each category's listing role (required fields), beside title, description and place.
ROLE = {"jobs": "hiring", "housing": "offering", "mentoring": "mentor", "cofounders": "founder"}


def _fixed_meta(category: str, topic: str, rng: random.Random) -> dict[str, str]:
    if category == "jobs":
        return {"employmentType": rng.choice(["full_time", "part_time", "contract"])}
    if category == "housing":
        kind = {"room": "room", "studio": "studio", "house": "house"}.get(topic, "apartment")
        return {"propertyType": kind, "rentMonthly": str(rng.randrange(4, 40) * 50)}
    if category == "mentoring":
        topics = {"data_mentor": "data", "ux_mentor": "design", "career_mentor": "career"}.get(topic, "engineering")
        return {"topics": topics, "yearsExperience": str(rng.randrange(3, 25))}
    return {"stage": rng.choice(["idea", "prototype", "revenue"])}


@dataclass
class Query:
    """A query and what answers it: ``grades`` per topic (2 fully, 1 in part); ``city``: the place must
    match; ``spelt``: a typo query's words as meant."""

    id: str
    kind: str
    q: str
    grades: dict[str, int] = field(default_factory=dict)
    city: str | None = None
    spelt: str | None = None


Q = Query
#: An engineer query: engineering jobs fully; an engineering co-founder or mentor (an engineer offering help) in part.
ENGINEERING_JOBS = {"python_dev": 2, "rust_dev": 2, "devops": 2, "frontend_dev": 2, "tech_cofounder": 1, "startup_mentor": 1,
                    "leadership_mentor": 1}
QUERIES = [
    # plural / singular
    Q("p1", "plural", "engineers", ENGINEERING_JOBS),
    Q("p2", "plural", "engineer", ENGINEERING_JOBS),
    Q("p3", "plural", "developers", {"python_dev": 2, "rust_dev": 2, "frontend_dev": 2, "python_mentor": 1}),
    Q("p4", "plural", "apartments", {"apartment": 2, "studio": 1}),
    Q("p5", "plural", "rooms", {"room": 2, "studio": 1}),
    Q("p6", "plural", "nurses", {"nurse": 2, "health_cofounder": 1}),
    Q("p7", "plural", "designers", {"designer": 2, "ux_mentor": 1}),
    Q("p8", "plural", "mentors", {"python_mentor": 2, "data_mentor": 2, "career_mentor": 2, "startup_mentor": 2,
                                  "ux_mentor": 2, "cafe_mentor": 2, "leadership_mentor": 2, "language_mentor": 2,
                                  "photo_mentor": 2, "music_mentor": 2}),
    Q("p9", "plural", "accountant", {"accountant": 2}),
    Q("p10", "plural", "teachers", {"teacher": 2, "language_mentor": 1, "edtech_cofounder": 1}),
    # derived forms
    Q("d1", "derived", "engineering", ENGINEERING_JOBS),
    Q("d2", "derived", "development", {"python_dev": 2, "rust_dev": 2, "frontend_dev": 2}),
    Q("d3", "derived", "designing", {"designer": 2, "ux_mentor": 1}),
    Q("d4", "derived", "nursing", {"nurse": 2}),
    Q("d5", "derived", "accounting", {"accountant": 2}),
    Q("d6", "derived", "teaching", {"teacher": 2, "language_mentor": 1}),
    Q("d7", "derived", "mentoring", {"python_mentor": 2, "data_mentor": 2, "career_mentor": 2, "startup_mentor": 2,
                                     "ux_mentor": 2, "cafe_mentor": 2, "leadership_mentor": 2, "language_mentor": 2,
                                     "photo_mentor": 2, "music_mentor": 2}),
    Q("d8", "derived", "electrical", {"electrician": 2}),
    Q("d9", "derived", "marketer", {"marketing": 2, "marketing_cofounder": 1}),
    Q("d10", "derived", "coaching", {"career_mentor": 2, "leadership_mentor": 2}),
    # one typo
    Q("t1", "typo1", "pyhton", {"python_dev": 2, "python_mentor": 2, "data_scientist": 1, "ai_cofounder": 1}, spelt="python"),
    Q("t2", "typo1", "enginer", ENGINEERING_JOBS, spelt="engineer"),
    Q("t3", "typo1", "apartmnet", {"apartment": 2, "studio": 1}, spelt="apartment"),
    Q("t4", "typo1", "kubernets", {"devops": 2}, spelt="kubernetes"),
    Q("t5", "typo1", "desinger", {"designer": 2, "ux_mentor": 1}, spelt="designer"),
    Q("t6", "typo1", "barsita", {"barista": 2}, spelt="barista"),
    Q("t7", "typo1", "teahcer", {"teacher": 2}, spelt="teacher"),
    Q("t8", "typo1", "electrcian", {"electrician": 2}, spelt="electrician"),
    Q("t9", "typo1", "nures", {"nurse": 2}, spelt="nurse"),
    Q("t10", "typo1", "markting", {"marketing": 2, "marketing_cofounder": 1}, spelt="marketing"),
    # two typos in a long word
    Q("u1", "typo2", "acountnat", {"accountant": 2}, spelt="accountant"),
    Q("u2", "typo2", "devloppers", {"python_dev": 2, "rust_dev": 2, "frontend_dev": 2}, spelt="developers"),
    Q("u3", "typo2", "infrastrcutre", {"devops": 2}, spelt="infrastructure"),
    Q("u4", "typo2", "photogrpaer", {"photo_mentor": 2}, spelt="photographer"),
    Q("u5", "typo2", "scinetsits", {"data_scientist": 2, "data_mentor": 1}, spelt="scientists"),
    Q("u6", "typo2", "restuarnats", {"cafe_mentor": 2}, spelt="restaurants"),
    # prefixes (search as you type)
    Q("x1", "prefix", "engin", ENGINEERING_JOBS),
    Q("x2", "prefix", "pyth", {"python_dev": 2, "python_mentor": 2, "data_scientist": 1, "ai_cofounder": 1}),
    Q("x3", "prefix", "kuber", {"devops": 2}),
    Q("x4", "prefix", "apart", {"apartment": 2, "studio": 1}),
    Q("x5", "prefix", "barist", {"barista": 2}),
    Q("x6", "prefix", "accou", {"accountant": 2}),
    Q("x7", "prefix", "cowork", {"office": 2}),
    Q("x8", "prefix", "photog", {"photo_mentor": 2}),
    # accents
    Q("a1", "accent", "zurich cafe", {"cafe_mentor": 2, "barista": 2}, city="Zürich"),
    Q("a2", "accent", "cafe", {"barista": 2, "cafe_mentor": 2, "food_cofounder": 1}),
    Q("a3", "accent", "munchen apartment", {"apartment": 2, "studio": 1}, city="München"),
    Q("a4", "accent", "koln room", {"room": 2, "studio": 1}, city="Köln"),
    Q("a5", "accent", "malaga studio", {"studio": 2, "apartment": 1}, city="Málaga"),
    Q("a6", "accent", "sao paulo apartment", {"apartment": 2, "studio": 1}, city="São Paulo"),
    # several words
    Q("m1", "multi", "python developer", {"python_dev": 2, "python_mentor": 1}),
    Q("m2", "multi", "senior python engineer", {"python_dev": 2}),
    Q("m3", "multi", "data science mentor", {"data_mentor": 2, "data_scientist": 1}),
    Q("m4", "multi", "room berlin", {"room": 2, "studio": 1}, city="Berlin"),
    Q("m5", "multi", "react developer", {"frontend_dev": 2}),
    Q("m6", "multi", "startup mentoring", {"startup_mentor": 2}),
    Q("m7", "multi", "specialty coffee", {"barista": 2, "food_cofounder": 2, "cafe_mentor": 1}),
    Q("m8", "multi", "fintech cofounder", {"tech_cofounder": 2}),
    Q("m9", "multi", "renewable energy", {"climate_cofounder": 2}),
    Q("m10", "multi", "machine learning", {"data_scientist": 2, "ai_cofounder": 2, "data_mentor": 2}),
    # nothing answers these
    Q("n1", "none", "veterinarian"),
    Q("n2", "none", "submarine"),
    Q("n3", "none", "astronaut training"),
    Q("n4", "none", "blockchain lawyer"),
]


def build() -> dict[str, object]:
    """The listings (with topic and city) and the queries with their judgments."""
    rng = random.Random(25)
    listings: list[dict[str, object]] = []
    for index, topic in enumerate(TOPICS):
        for n in range(PER_TOPIC):
            city, lat, lng = CITIES[(n + index) % len(CITIES)]  # a topic is in 9 of the 10 cities
            title = topic.titles[n % len(topic.titles)]
            sentences = [*rng.sample(topic.sentences, rng.randrange(2, 4)), rng.choice(COMMON[topic.category])]
            meta = {"title": title, "description": "<p>" + " ".join(sentences) + "</p>", "location": city,
                    "location_lat": f"{lat + rng.uniform(-0.05, 0.05):.5f}", "location_lng": f"{lng + rng.uniform(-0.05, 0.05):.5f}",
                    **_fixed_meta(topic.category, topic.key, rng)}
            listings.append({"key": f"{topic.key}-{n}", "topic": topic.key, "city": city, "categoryKey": topic.category,
                             "roleKey": ROLE[topic.category], "meta": meta})
    judgments: dict[str, dict[str, int]] = {}
    for query in QUERIES:
        graded = {}
        for listing in listings:
            grade = query.grades.get(str(listing["topic"]), 0)
            if query.city is not None and listing["city"] != query.city:
                grade = 0
            if grade:
                graded[str(listing["key"])] = grade
        judgments[query.id] = graded
    return {"listings": listings, "queries": [asdict(q) for q in QUERIES], "judgments": judgments}


def main() -> None:
    """Write :data:`OUT`."""
    OUT.write_text(json.dumps(build(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
