"""Generate the sample collections bundled with nDCG Lab (``legal`` and ``web``).

Run from the repository root::

    python ndcg_lab/sample_data/make_samples.py            # rewrites legal/ and web/ beside this script
    python ndcg_lab/sample_data/make_samples.py --out DIR  # writes DIR/legal and DIR/web instead

Everything is synthetic: case names, parties, pages and relevance judgments are
made up from word lists; statute citations are there for flavour. Each run is a
simulation of a system with a stated error profile (see ``ndcg_lab/sample_data/README.md``),
drawn from ``numpy.random.default_rng`` with fixed seeds, so two runs of this
script write byte-identical files (same numpy version).

Scores are written with a fixed number of decimals and made distinct within a
query, except for the deliberate tie groups in ``legal/bm25.run``; distinct
values stay distinct in float32 (pytrec_eval's precision) at these magnitudes.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent

LEGAL_SEED = 20_240_715
WEB_SEED = 20_240_705

# --------------------------------------------------------------------------------------
# Simulation parameters. Every system scores a document from latent features:
#   lexical match (BM25 family), semantic match (dense / neural), true relevance (rerankers).
# --------------------------------------------------------------------------------------

LEGAL = {
    # per-kind base of the lexical feature (what BM25 sees)
    "lex": {"precedent": 2.3, "appellate": 1.9, "statute": 1.6, "dissent": 2.1, "order": 1.6,
            "neighbour": 1.5, "nearby": 0.5, "far": 0.0, "unjudged": 0.1, "secondary": 0.8},
    "lex_unjudged_per_grade": 0.25,
    # per-kind base of the semantic feature (what the dense bi-encoder sees)
    "sem": {"precedent": 2.3, "appellate": 2.0, "statute": 0.8, "dissent": 2.4, "order": 1.6,
            "neighbour": 1.6, "nearby": 0.9, "far": 0.2, "unjudged": 0.8, "secondary": 1.4},
    "sem_unjudged_per_grade": 0.25,
    "mismatch_prob": 0.22,       # relevant docs that use other words than the query
    "mismatch_penalty": 2.0,     # lexical feature lost to vocabulary mismatch
    "bm25_noise": 0.6,
    "qe_recover": 1.0,           # expansion terms recover mismatched docs ...
    "qe_drift": 0.15,            # ... and drift towards neighbouring topics
    "qe_noise": 0.6,
    "dense_noise": 0.6,
    # the cross-encoder re-scores BM25's top 100; its logit moves a document from its BM25
    # position by w * (what it reads as relevance) + noise: a conservative re-ranker
    "ce_relevance_weight": 0.09,
    "ce_relevance": {"dissent": 0.6, "neighbour": 0.6, "nearby": 0.4, "order": 0.5, "far": 0.0,
                     "secondary": 0.8},
    "ce_noise": 0.05,
    "ce_dissent_fooled_prob": 0.1,   # queries where the dissent reads as on point ...
    "ce_dissent_fooled_boost": 0.8,  # ... and jumps up the ranking
}

WEB = {
    "lex": {4: 2.0, 3: 2.0, 2: 1.9, 1: 1.8, "spam": 1.5, "neighbour": 1.2, "unjudged": 0.5,
            "background": 0.3, "far": 0.0},
    "lex_unjudged_per_grade": 0.2,
    "sem": {4: 3.2, 3: 2.9, 2: 1.3, 1: 1.1, "spam": 0.5, "neighbour": 1.7, "unjudged": 0.7,
            "background": 0.5, "far": 0.2},
    "sem_unjudged_per_grade": 0.35,
    "lexical_noise": 0.6,
    "neural_noise": 0.45,
    "neural_miss_prob": {1: 0.5, 2: 0.5, 3: 0.3, 4: 0.3},  # relevant pages the ANN search never returns
    "hybrid_neural_weight": 0.25,
}

DEPTH = 100

# --------------------------------------------------------------------------------------
# Legal topics: (family, query, on-point phrases, related phrases, statutes)
# --------------------------------------------------------------------------------------

LEGAL_TOPICS = [
    ("torts", "slip and fall on wet floor in grocery store",
     ["slip and fall on wet floor", "customer slipped on spilled liquid", "constructive notice of floor hazard"],
     ["open and obvious hazard doctrine", "store inspection procedures and notice", "mode of operation rule"],
     ["Cal. Civ. Code § 1714 — duty of care",
      "Fla. Stat. § 768.0755 — transitory foreign substance in a business establishment"]),
    ("torts", "premises liability for criminal attack in parking lot",
     ["landlord liability for assault in parking garage", "foreseeability of criminal acts on premises",
      "negligent security at apartment complex"],
     ["duty to provide security guards", "prior similar incidents rule"],
     ["Cal. Civ. Code § 1714 — duty of care",
      "Tex. Civ. Prac. & Rem. Code § 75.002 — liability of landowners"]),
    ("employment", "wrongful termination in violation of public policy",
     ["discharge for refusing to violate the law", "termination for whistleblowing as public policy tort",
      "at-will employee fired for serving on a jury"],
     ["implied contract of continued employment", "constructive discharge standard"],
     ["Cal. Lab. Code § 1102.5 — whistleblower protection", "Cal. Lab. Code § 2922 — at-will employment",
      "Cal. Lab. Code § 230 — jury duty leave"]),
    ("property", "adverse possession open notorious hostile possession",
     ["adverse possession of strip along boundary fence", "hostile and notorious possession for statutory period",
      "tacking of successive adverse possessors"],
     ["boundary by acquiescence", "color of title and payment of taxes"],
     ["Cal. Civ. Proc. Code § 325 — adverse possession; payment of taxes",
      "Cal. Civ. Proc. Code § 318 — seisin within five years",
      "N.Y. Real Prop. Acts. Law § 501 — adverse possession defined"]),
    ("procedure", "spoliation of evidence adverse inference instruction",
     ["adverse inference for destroyed surveillance video",
      "sanctions for spoliation of electronically stored information",
      "intentional destruction of evidence before litigation"],
     ["duty to preserve evidence when litigation is anticipated", "litigation hold obligations"],
     ["Fed. R. Civ. P. 37(e) — failure to preserve electronically stored information",
      "Cal. Evid. Code § 413 — inference from failure to explain or deny evidence",
      "Cal. Penal Code § 135 — destroying or concealing evidence"]),
    ("torts", "respondeat superior employer liability for employee negligence",
     ["employer vicariously liable for delivery driver accident", "scope of employment under respondeat superior",
      "frolic and detour doctrine"],
     ["independent contractor versus employee control test", "going and coming rule"],
     ["Cal. Gov. Code § 815.2 — public entity liability for acts of employees",
      "Cal. Civ. Code § 2338 — principal's liability for agent's negligence",
      "Cal. Veh. Code § 17150 — owner liability for permissive use"]),
    ("corporate", "piercing the corporate veil alter ego shareholder liability",
     ["alter ego doctrine and commingling of funds", "piercing the veil of an undercapitalized corporation",
      "shareholder personal liability for corporate debts"],
     ["single business enterprise theory", "reverse veil piercing"],
     ["Cal. Corp. Code § 17703.04 — liability of LLC members",
      "Del. Code Ann. tit. 8, § 102(b)(6) — stockholder liability for corporate debts",
      "Del. Code Ann. tit. 6, § 18-303 — liability of LLC members to third parties"]),
    ("torts", "medical malpractice failure to obtain informed consent",
     ["physician's duty to disclose surgical risks", "informed consent and the material risk standard",
      "lack of informed consent as battery"],
     ["medical standard of care expert testimony", "loss of chance doctrine"],
     ["Cal. Civ. Code § 3333.2 — noneconomic damages in medical negligence",
      "Cal. Civ. Proc. Code § 340.5 — limitations period for medical negligence",
      "N.Y. Pub. Health Law § 2805-d — lack of informed consent"]),
    ("torts", "products liability design defect risk utility test",
     ["design defect under the consumer expectations test", "risk-utility balancing for defective design",
      "feasible alternative design requirement"],
     ["failure to warn of product hazards", "manufacturing defect strict liability"],
     ["Tex. Civ. Prac. & Rem. Code § 82.005 — design defects",
      "15 U.S.C. § 2064 — substantial product hazards",
      "N.J. Stat. Ann. § 2A:58C-2 — product liability actions"]),
    ("torts", "dog bite strict liability of owner",
     ["strict liability for dog bite injuries", "dog owner liability without knowledge of viciousness",
      "one-bite rule"],
     ["landlord liability for tenant's dangerous dog", "provocation defense in dog bite cases"],
     ["Cal. Civ. Code § 3342 — dog bites; liability of owner",
      "Fla. Stat. § 767.04 — dog owner's liability for damages",
      "510 Ill. Comp. Stat. 5/16 — animal attacks or injuries"]),
    ("torts", "attractive nuisance child trespasser swimming pool",
     ["attractive nuisance doctrine applied to swimming pool", "landowner liability to trespassing children",
      "child drowned in unfenced pool"],
     ["duty owed to adult trespassers", "artificial conditions highly dangerous to children"],
     ["Cal. Health & Safety Code § 115922 — swimming pool safety features",
      "Fla. Stat. § 515.27 — residential swimming pool barriers"]),
    ("torts", "defamation public figure actual malice",
     ["actual malice requirement for public figure plaintiff", "reckless disregard for truth in news report",
      "limited-purpose public figure defamation"],
     ["anti-SLAPP motion to strike defamation claim", "opinion versus statement of fact"],
     ["Cal. Civ. Proc. Code § 425.16 — anti-SLAPP motion to strike", "Cal. Civ. Code § 45 — libel defined",
      "Cal. Civ. Code § 48a — correction demand"]),
    ("torts", "intentional infliction of emotional distress outrageous conduct",
     ["extreme and outrageous conduct element", "proof of severe emotional distress",
      "emotional distress claim by employee against supervisor"],
     ["negligent infliction of emotional distress by bystander", "zone of danger rule"],
     ["Cal. Civ. Code § 3294 — punitive damages for malice, oppression or fraud",
      "Cal. Gov. Code § 12940 — unlawful employment practices"]),
    ("employment", "negligent hiring and retention of dangerous employee",
     ["employer liability for negligent hiring of violent employee", "negligent retention after notice of misconduct",
      "duty to run background check before hiring"],
     ["negligent supervision of employees", "scope of employment for intentional torts"],
     ["Cal. Lab. Code § 432.7 — criminal history inquiries", "Cal. Gov. Code § 12952 — fair chance hiring",
      "Tex. Civ. Prac. & Rem. Code § 142.002 — liability for hiring persons with criminal records"]),
    ("corporate", "business judgment rule director breach of fiduciary duty",
     ["business judgment rule protection for board decision", "director duty of care and gross negligence",
      "duty of loyalty in self-dealing transaction"],
     ["demand futility in derivative suit", "entire fairness review"],
     ["Del. Code Ann. tit. 8, § 141 — board of directors; powers",
      "Del. Code Ann. tit. 8, § 144 — interested directors",
      "Cal. Corp. Code § 309 — standard of care of directors"]),
    ("contracts", "promissory estoppel detrimental reliance on promise",
     ["promissory estoppel for rescinded job offer", "detrimental reliance without consideration",
      "clear and unambiguous promise requirement"],
     ["equitable estoppel elements", "unjust enrichment and quasi-contract"],
     ["Cal. Civ. Code § 1550 — essential elements of contract", "U.C.C. § 2-205 — firm offers"]),
    ("contracts", "statute of frauds oral agreement to sell real estate",
     ["oral contract for sale of land unenforceable", "part performance exception to statute of frauds",
      "sufficiency of writing for real property sale"],
     ["email exchange as signed writing", "equitable estoppel to assert statute of frauds"],
     ["Cal. Civ. Code § 1624 — statute of frauds",
      "N.Y. Gen. Oblig. Law § 5-703 — conveyances of real property",
      "15 U.S.C. § 7001 — electronic signatures in commerce"]),
    ("contracts", "liquidated damages clause unenforceable penalty",
     ["liquidated damages versus unenforceable penalty", "reasonable forecast of damages at contracting",
      "late fee as liquidated damages"],
     ["proof of actual damages for breach of contract", "mitigation of damages"],
     ["Cal. Civ. Code § 1671 — liquidated damages", "U.C.C. § 2-718 — liquidation or limitation of damages"]),
    ("employment", "noncompete agreement enforceability against former employee",
     ["reasonableness of non-compete geographic scope", "covenant not to compete void as restraint of trade",
      "blue-penciling an overbroad non-compete"],
     ["non-solicitation of customers clause", "inevitable disclosure doctrine"],
     ["Cal. Bus. & Prof. Code § 16600 — contracts in restraint of trade void",
      "Fla. Stat. § 542.335 — valid restraints of trade",
      "Tex. Bus. & Com. Code § 15.50 — covenants not to compete"]),
    ("contracts", "arbitration clause unconscionability consumer contract",
     ["procedurally unconscionable arbitration agreement", "class action waiver in arbitration clause",
      "arbitration provision in adhesion contract"],
     ["delegation clause and arbitrability", "waiver of the right to arbitrate"],
     ["9 U.S.C. § 2 — validity of arbitration agreements", "Cal. Civ. Code § 1670.5 — unconscionable contracts",
      "Cal. Civ. Proc. Code § 1281.2 — order to arbitrate"]),
    ("contracts", "insurance bad faith denial of claim",
     ["insurer bad faith refusal to pay claim", "insurer breach of implied covenant of good faith",
      "unreasonable delay in claims handling"],
     ["duty to defend under liability policy", "duty to settle within policy limits"],
     ["Cal. Ins. Code § 790.03 — unfair claims settlement practices",
      "Fla. Stat. § 624.155 — civil remedy against insurers",
      "Tex. Ins. Code § 541.060 — unfair settlement practices"]),
    ("employment", "hostile work environment sexual harassment",
     ["severe or pervasive harassment standard", "hostile work environment created by supervisor",
      "employer liability for coworker harassment"],
     ["quid pro quo harassment", "Faragher-Ellerth affirmative defense"],
     ["42 U.S.C. § 2000e-2 — unlawful employment practices",
      "Cal. Gov. Code § 12940 — unlawful employment practices",
      "29 C.F.R. § 1604.11 — sexual harassment"]),
    ("employment", "age discrimination in employment termination ADEA",
     ["age discrimination claim under the ADEA", "replacement by substantially younger employee",
      "but-for causation in age discrimination"],
     ["pretext in reduction in force", "disparate impact age claims"],
     ["29 U.S.C. § 623 — prohibition of age discrimination", "29 U.S.C. § 631 — age limits"]),
    ("employment", "reasonable accommodation for disability under ADA",
     ["failure to provide reasonable accommodation", "interactive process obligation under the ADA",
      "leave of absence as reasonable accommodation"],
     ["undue hardship defense", "regarded-as-disabled claim"],
     ["42 U.S.C. § 12112 — discrimination", "42 U.S.C. § 12111 — definitions; reasonable accommodation",
      "29 C.F.R. § 1630.9 — not making reasonable accommodation"]),
    ("employment", "FMLA retaliation for taking medical leave",
     ["FMLA interference with leave rights", "retaliatory discharge after FMLA leave",
      "notice of serious health condition under the FMLA"],
     ["CFRA leave protections", "reinstatement after protected leave"],
     ["29 U.S.C. § 2615 — prohibited acts", "29 U.S.C. § 2612 — leave requirement",
      "Cal. Gov. Code § 12945.2 — family care and medical leave"]),
    ("employment", "unpaid overtime misclassification of exempt employees",
     ["misclassification of employees as exempt", "overtime for off-the-clock work",
      "administrative exemption under the FLSA"],
     ["meal and rest break premiums", "independent contractor misclassification"],
     ["29 U.S.C. § 207 — maximum hours", "Cal. Lab. Code § 510 — overtime",
      "Cal. Lab. Code § 226.7 — meal and rest periods"]),
    ("property", "prescriptive easement over neighbor's driveway",
     ["prescriptive easement by continuous use of driveway", "open and notorious use for prescriptive period",
      "permissive use defeats prescriptive easement"],
     ["easement by necessity for landlocked parcel", "implied easement from prior use"],
     ["Cal. Civ. Code § 1007 — title by prescription",
      "Cal. Civ. Code § 1008 — posting to prevent prescriptive use"]),
    ("property", "landlord breach of implied warranty of habitability",
     ["implied warranty of habitability in residential lease", "rent abatement for uninhabitable unit",
      "repair and deduct remedy for mold"],
     ["constructive eviction", "retaliatory eviction"],
     ["Cal. Civ. Code § 1941.1 — untenantable dwellings", "Cal. Civ. Code § 1942 — repair and deduct",
      "N.Y. Real Prop. Law § 235-b — warranty of habitability"]),
    ("property", "quiet title action competing claims to property",
     ["quiet title action to resolve boundary dispute", "quiet title against lender after foreclosure",
      "clouded title from void deed"],
     ["slander of title", "validity of tax deed"],
     ["Cal. Civ. Proc. Code § 760.020 — quiet title action",
      "Cal. Civ. Proc. Code § 761.020 — complaint in quiet title action"]),
    ("property", "eminent domain just compensation for taking",
     ["just compensation for condemned property", "regulatory taking of private property",
      "public use requirement in condemnation"],
     ["inverse condemnation claim", "severance damages"],
     ["U.S. Const. amend. V — takings clause", "Cal. Civ. Proc. Code § 1263.320 — fair market value",
      "42 U.S.C. § 4651 — uniform policy on real property acquisition"]),
    ("property", "private nuisance neighbor noise and odors",
     ["private nuisance from unreasonable noise", "substantial interference with use and enjoyment",
      "odor nuisance from livestock operation"],
     ["public nuisance abatement", "coming to the nuisance defense"],
     ["Cal. Civ. Code § 3479 — nuisance defined",
      "Cal. Civ. Code § 3482.5 — agricultural operations not a nuisance"]),
    ("criminal", "warrantless vehicle search automobile exception",
     ["automobile exception and probable cause to search vehicle", "search incident to arrest of vehicle occupant",
      "inventory search of impounded car"],
     ["voluntariness of consent to search", "plain view doctrine"],
     ["U.S. Const. amend. IV — searches and seizures", "Cal. Penal Code § 1538.5 — motion to suppress"]),
    ("criminal", "Miranda warnings custodial interrogation suppression",
     ["custodial interrogation without Miranda warnings", "invocation of right to counsel during interrogation",
      "knowing and voluntary waiver of Miranda rights"],
     ["voluntariness of confession", "public safety exception"],
     ["U.S. Const. amend. V — self-incrimination", "18 U.S.C. § 3501 — admissibility of confessions"]),
    ("criminal", "ineffective assistance of counsel Strickland prejudice",
     ["deficient performance and prejudice under Strickland", "failure to investigate alibi witnesses",
      "ineffective assistance during plea bargaining"],
     ["conflict of interest of defense counsel", "right to counsel of choice"],
     ["U.S. Const. amend. VI — assistance of counsel", "28 U.S.C. § 2254 — state custody; remedies",
      "28 U.S.C. § 2255 — federal custody; remedies on motion attacking sentence"]),
    ("criminal", "double jeopardy retrial after mistrial",
     ["retrial after mistrial and manifest necessity", "double jeopardy bar after acquittal",
      "same elements test for double jeopardy"],
     ["collateral estoppel in criminal cases", "dual sovereignty doctrine"],
     ["U.S. Const. amend. V — double jeopardy", "Cal. Penal Code § 654 — multiple punishment",
      "Cal. Penal Code § 1023 — conviction or acquittal bars prosecution"]),
    ("criminal", "qualified immunity police excessive force",
     ["qualified immunity for excessive force claim", "clearly established law requirement",
      "taser use on nonresisting suspect"],
     ["Monell municipal liability", "deliberate indifference to medical needs"],
     ["42 U.S.C. § 1983 — civil action for deprivation of rights", "42 U.S.C. § 1988 — attorney's fees"]),
    ("torts", "res ipsa loquitur inference of negligence",
     ["res ipsa loquitur applied to elevator malfunction", "exclusive control element of res ipsa loquitur",
      "surgical sponge left in patient"],
     ["circumstantial evidence of negligence", "negligence per se"],
     ["Cal. Evid. Code § 646 — res ipsa loquitur",
      "Cal. Evid. Code § 669 — presumption of failure to exercise due care"]),
    ("torts", "comparative negligence apportionment of fault",
     ["pure comparative negligence apportionment", "modified comparative fault fifty-one percent bar",
      "allocation of fault to nonparties"],
     ["joint and several liability", "primary assumption of risk"],
     ["Cal. Civ. Code § 1431.2 — several liability for noneconomic damages",
      "Tex. Civ. Prac. & Rem. Code § 33.001 — proportionate responsibility",
      "N.Y. C.P.L.R. 1411 — damages where culpable conduct is established"]),
    ("torts", "dram shop liability for serving intoxicated patron",
     ["bar liability for serving visibly intoxicated patron", "social host liability for drunk driving crash",
      "causation under the dram shop act"],
     ["negligent entrustment of vehicle", "liquor license violations"],
     ["Cal. Bus. & Prof. Code § 25602 — sale to obviously intoxicated person",
      "N.Y. Gen. Oblig. Law § 11-101 — compensation caused by illegal sale of intoxicating liquor",
      "Tex. Alco. Bev. Code § 2.02 — causes of action"]),
    ("torts", "wrongful death damages for surviving family",
     ["wrongful death damages for loss of support", "standing of heirs in wrongful death action",
      "loss of companionship damages"],
     ["survival action versus wrongful death", "loss of consortium claim"],
     ["Cal. Civ. Proc. Code § 377.60 — wrongful death; who may sue",
      "Cal. Civ. Proc. Code § 377.34 — survival damages",
      "N.Y. Est. Powers & Trusts Law § 5-4.1 — action for wrongful death"]),
    ("ip", "trade secret misappropriation by former employee",
     ["misappropriation of customer list trade secret", "reasonable measures to maintain secrecy",
      "injunction for trade secret misappropriation"],
     ["breach of confidentiality agreement", "independent development defense"],
     ["18 U.S.C. § 1836 — civil proceedings for trade secret theft",
      "Cal. Civ. Code § 3426.1 — trade secret definitions"]),
    ("ip", "copyright fair use transformative use",
     ["transformative use under the fair use factors", "fair use of copyrighted photographs",
      "parody as fair use"],
     ["substantial similarity test", "de minimis copying"],
     ["17 U.S.C. § 107 — fair use", "17 U.S.C. § 106 — exclusive rights in copyrighted works"]),
    ("ip", "trademark infringement likelihood of confusion",
     ["likelihood of confusion factors", "confusingly similar marks in the same market",
      "initial interest confusion online"],
     ["trademark dilution by blurring", "genericness of a mark"],
     ["15 U.S.C. § 1114 — remedies; infringement",
      "15 U.S.C. § 1125 — false designations of origin; dilution"]),
    ("corporate", "securities fraud scienter Rule 10b-5",
     ["pleading scienter under Rule 10b-5", "material misstatement in earnings release",
      "loss causation in securities fraud"],
     ["safe harbor for forward-looking statements", "fraud-on-the-market presumption"],
     ["15 U.S.C. § 78j(b) — manipulative and deceptive devices",
      "17 C.F.R. § 240.10b-5 — employment of manipulative and deceptive devices",
      "15 U.S.C. § 78u-4 — private securities litigation"]),
    ("family", "child custody relocation best interests of the child",
     ["relocation of custodial parent and best interests", "modification of custody for changed circumstances",
      "joint custody and primary residence"],
     ["grandparent visitation rights", "child support deviation"],
     ["Cal. Fam. Code § 3011 — best interest of child; factors",
      "Cal. Fam. Code § 7501 — custodial parent's right to change residence"]),
    ("family", "modification of spousal support after retirement",
     ["spousal support modification upon retirement", "material change of circumstances for alimony",
      "cohabitation reducing spousal support"],
     ["imputation of income to supporting spouse", "division of pension in divorce"],
     ["Cal. Fam. Code § 4320 — spousal support factors", "Cal. Fam. Code § 3651 — modification of support",
      "Cal. Fam. Code § 4323 — cohabitation; presumption"]),
    ("procedure", "personal jurisdiction minimum contacts internet sales",
     ["minimum contacts through interactive website", "specific jurisdiction over nonresident defendant",
      "purposeful availment by online sales"],
     ["general jurisdiction and the at-home test", "enforceability of forum selection clause"],
     ["Cal. Civ. Proc. Code § 410.10 — jurisdiction exercisable",
      "Fed. R. Civ. P. 4(k) — territorial limits of effective service"]),
    ("procedure", "forum non conveniens dismissal foreign plaintiff",
     ["forum non conveniens dismissal in favor of foreign forum", "adequate alternative forum requirement",
      "deference to foreign plaintiff's choice of forum"],
     ["transfer of venue for convenience", "comity and parallel foreign proceedings"],
     ["28 U.S.C. § 1404 — change of venue", "Cal. Civ. Proc. Code § 410.30 — forum non conveniens"]),
    ("procedure", "class certification commonality requirement",
     ["commonality under Rule 23(a)(2)", "predominance of common questions",
      "class certification denied for individualized damages"],
     ["ascertainability of class members", "CAFA removal of class actions"],
     ["Fed. R. Civ. P. 23 — class actions", "28 U.S.C. § 1332(d) — class action jurisdiction",
      "Cal. Civ. Proc. Code § 382 — class actions"]),
    ("procedure", "government claims act notice of claim against public entity",
     ["notice of claim requirement against public entity", "late claim relief against government entity",
      "dangerous condition of public property"],
     ["discretionary function immunity", "waiver of sovereign immunity"],
     ["Cal. Gov. Code § 911.2 — time for presentation of claims",
      "Cal. Gov. Code § 835 — dangerous condition of public property",
      "28 U.S.C. § 2680 — exceptions to the Federal Tort Claims Act"]),
]

SURNAMES = [
    "Smith", "Jones", "Brown", "Garcia", "Martinez", "Nguyen", "Okafor", "Patel", "Kim", "Rossi", "Novak",
    "Sullivan", "O'Brien", "Hernandez", "Lopez", "Wilson", "Anderson", "Thompson", "Moore", "Jackson", "White",
    "Harris", "Clark", "Lewis", "Walker", "Young", "Allen", "King", "Wright", "Scott", "Green", "Baker",
    "Adams", "Nelson", "Hill", "Campbell", "Mitchell", "Roberts", "Carter", "Phillips", "Evans", "Turner",
    "Torres", "Parker", "Collins", "Edwards", "Stewart", "Flores", "Morris", "Murphy", "Cook", "Rogers",
    "Morgan", "Peterson", "Cooper", "Reed", "Bailey", "Bell", "Gomez", "Kelly", "Howard", "Ward", "Cox",
    "Diaz", "Richardson", "Wood", "Watson", "Brooks", "Bennett", "Gray", "James", "Reyes", "Cruz", "Hughes",
    "Price", "Myers", "Long", "Foster", "Sanders", "Ross", "Morales", "Powell", "Jenkins", "Perry", "Russell",
    "Chen", "Wang", "Singh", "Kowalski", "Larsen", "Schmidt", "Dubois", "Haddad", "Tanaka", "Ibrahim",
]
COMPANY_STEMS = [
    "Pacific", "Summit", "Harbor", "Evergreen", "Liberty", "Pioneer", "Keystone", "Redwood", "Atlas", "Beacon",
    "Cascade", "Frontier", "Golden State", "Heartland", "Lakeside", "Meridian", "Northgate", "Riverside",
    "Sierra", "Valley", "Westfield", "Union", "Continental", "Bayview", "Granite", "Crescent", "Oakmont",
]
COMPANY_SUFFIXES = {
    "torts": ["Grocery Co.", "Markets, Inc.", "Properties LLC", "Transit Auth.", "Mfg. Co.", "Hospital",
              "Medical Group", "Realty Corp.", "Tavern, Inc.", "Motors, Inc.", "Foods, Inc."],
    "employment": ["Logistics, Inc.", "Health Sys.", "Staffing LLC", "Bank, N.A.", "Corp.", "Airlines, Inc.",
                   "Unified Sch. Dist.", "Hotels, Inc.", "Security Servs., Inc."],
    "property": ["Land Co.", "Homeowners Ass'n", "Dev. Corp.", "Apartments LLC", "Farms, Inc.",
                 "Mortgage Corp.", "Water Dist."],
    "contracts": ["Ins. Co.", "Builders, Inc.", "Wireless, Inc.", "Supply Co.", "Fin. Servs., LLC",
                  "Mut. Life Ins. Co.", "Auto Sales, Inc."],
    "corporate": ["Holdings, Inc.", "Capital Partners, L.P.", "Techs., Inc.", "Bancorp", "Energy Corp.",
                  "Pharms., Inc."],
    "ip": ["Software, Inc.", "Media Grp.", "Apparel Co.", "Brands, Inc.", "Records, LLC", "Labs, Inc."],
    "procedure": ["Airlines, Inc.", "Shipping Co.", "Pharms., Inc.", "Tel. Co.", "Motor Co.", "Retail Corp."],
    "criminal": [],
    "family": [],
}
CITIES = ["Oakland", "Fresno", "San Diego", "Sacramento", "Houston", "Tampa", "Chicago", "Newark", "Seattle",
          "Phoenix", "Boston", "Columbus", "Denver", "Atlanta", "Minneapolis", "Long Beach", "Spokane"]
STATE_COURTS = [
    ("Cal.", "People"), ("Cal. Ct. App.", "People"), ("N.Y.", "People"), ("N.Y. App. Div.", "People"),
    ("Tex.", "State"), ("Tex. App.", "State"), ("Fla.", "State"), ("Fla. Dist. Ct. App.", "State"),
    ("Ill.", "People"), ("Ill. App. Ct.", "People"), ("Mass.", "Commonwealth"), ("N.J.", "State"),
    ("N.J. Super. Ct. App. Div.", "State"), ("Ohio", "State"), ("Ohio Ct. App.", "State"),
    ("Wash.", "State"), ("Wash. Ct. App.", "State"), ("Pa. Super. Ct.", "Commonwealth"),
    ("Ga. Ct. App.", "State"), ("Colo. App.", "People"), ("Minn.", "State"), ("Ariz. Ct. App.", "State"),
]
FEDERAL_COURTS = ["1st Cir.", "2d Cir.", "3d Cir.", "4th Cir.", "5th Cir.", "6th Cir.", "7th Cir.", "8th Cir.",
                  "9th Cir.", "10th Cir.", "11th Cir.", "D.C. Cir.", "S.D.N.Y.", "N.D. Cal.", "N.D. Ill.",
                  "E.D. Pa.", "D. Mass.", "W.D. Tex."]
FEDERAL_SHARE = {"torts": 0.15, "employment": 0.5, "property": 0.1, "contracts": 0.3, "corporate": 0.45,
                 "ip": 0.9, "procedure": 0.6, "criminal": 0.35, "family": 0.0}
JOURNALS = ["Harv. L. Rev.", "Yale L.J.", "Stan. L. Rev.", "Colum. L. Rev.", "Cal. L. Rev.", "Mich. L. Rev.",
            "Tex. L. Rev.", "U. Chi. L. Rev.", "Geo. L.J.", "N.Y.U. L. Rev."]
ARTICLE_OPENERS = ["Rethinking", "The Limits of", "A Second Look at", "Against", "The Future of",
                   "Reconsidering", "The Myth of"]


# --------------------------------------------------------------------------------------
# Shared helpers
# --------------------------------------------------------------------------------------

@dataclass
class Doc:
    title: str
    topic: int          # index of the topic that owns the document (-1: shared statute)
    kind: str
    hidden_grade: int = 0   # true relevance to its own topic; only meaningful for unjudged docs
    docno: str = ""


def pick(rng: np.random.Generator, items):
    return items[int(rng.integers(len(items)))]


def to_fixed(values: np.ndarray, lo: float, hi: float, decimals: int) -> np.ndarray:
    """Map sorted-descending raw values affinely onto [lo, hi] and return them as
    integers in units of 10**-decimals, strictly decreasing (no accidental ties)."""
    span = values[0] - values[-1]
    unit = 10 ** decimals
    scaled = lo + (hi - lo) * (values - values[-1]) / (span if span > 0 else 1.0)
    ints = np.rint(scaled * unit).astype(np.int64)
    position = np.arange(len(ints), dtype=np.int64)
    # ints'[i] = min_{j<=i}(ints[j] - (i - j)): the largest strictly decreasing sequence below ints
    return np.minimum.accumulate(ints + position) - position


def top_k(keys: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest keys, best first (stable: earlier index wins an exact tie)."""
    order = np.argsort(-keys, kind="stable")
    return order[:k]


def format_run_lines(qid: str, docnos: list[str], ints: np.ndarray, decimals: int, tag: str) -> list[str]:
    unit = 10 ** decimals
    return [f"{qid} Q0 {docno} {rank} {value / unit:.{decimals}f} {tag}"
            for rank, (docno, value) in enumerate(zip(docnos, ints.tolist()), start=1)]


def write_text(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write("\n".join(lines) + "\n")


def assign_docnos(rng: np.random.Generator, docs: list[Doc], prefix: str, width: int) -> None:
    """Sparse, shuffled document numbers, so that docno order says nothing about a document."""
    numbers = rng.choice(10 ** width, size=len(docs), replace=False)
    for doc, number in zip(docs, numbers.tolist()):
        doc.docno = f"{prefix}{number:0{width}d}"


@dataclass
class Pool:
    """One query's candidate documents with their latent features."""
    docs: list[int]          # indices into the collection's doc list
    grade: np.ndarray        # true relevance (judged grade, hidden grade for unjudged, 0 otherwise)
    judged: np.ndarray       # bool: in the qrels
    kind: list[str]
    lex: np.ndarray
    sem: np.ndarray


# --------------------------------------------------------------------------------------
# Legal collection
# --------------------------------------------------------------------------------------

def case_name(rng: np.random.Generator, family: str, court_prefix: str) -> str:
    suffixes = COMPANY_SUFFIXES[family]
    if family == "criminal":
        if court_prefix == "United States" and rng.random() < 0.4:   # civil-rights suits
            return f"{pick(rng, SURNAMES)} v. {pick(rng, ['City of', 'County of'])} {pick(rng, CITIES)}"
        return f"{court_prefix} v. {pick(rng, SURNAMES)}"
    if family == "family":
        if court_prefix == "People" and rng.random() < 0.7:
            return f"In re Marriage of {pick(rng, SURNAMES)}"
        return f"{pick(rng, SURNAMES)} v. {pick(rng, SURNAMES)}"
    if family == "corporate" and rng.random() < 0.3:
        litigation = pick(rng, ["S'holder Litig.", "Sec. Litig.", "Derivative Litig."])
        return f"In re {pick(rng, COMPANY_STEMS)} {pick(rng, suffixes)} {litigation}"
    roll = rng.random()
    if roll < 0.55:
        return f"{pick(rng, SURNAMES)} v. {pick(rng, COMPANY_STEMS)} {pick(rng, suffixes)}"
    if roll < 0.75:
        return f"{pick(rng, SURNAMES)} v. {pick(rng, SURNAMES)}"
    if roll < 0.88 or family not in ("torts", "employment", "procedure"):
        return f"{pick(rng, COMPANY_STEMS)} {pick(rng, suffixes)} v. {pick(rng, SURNAMES)}"
    return f"{pick(rng, SURNAMES)} v. City of {pick(rng, CITIES)}"


def court_and_year(rng: np.random.Generator, family: str) -> tuple[str, str, int]:
    year = int(rng.integers(1962, 2024))
    if family == "corporate" and rng.random() < 0.5:
        return pick(rng, ["Del.", "Del. Ch."]), "State", year
    if rng.random() < FEDERAL_SHARE[family]:
        return pick(rng, FEDERAL_COURTS), "United States", year
    court, prefix = pick(rng, STATE_COURTS)
    return court, prefix, year


def legal_case_title(rng, family: str, phrase: str) -> tuple[str, str]:
    court, prefix, year = court_and_year(rng, family)
    name = case_name(rng, family, prefix)
    return f"{name} ({court} {year}) — {phrase}", name


def build_legal(seed: int = LEGAL_SEED, params: dict | None = None):
    p = LEGAL if params is None else params
    rng = np.random.default_rng(seed)            # structure: counts, grades, pools
    text = np.random.default_rng([seed, 100])    # wording only, so titles can change freely
    docs: list[Doc] = []
    statute_docs: dict[str, int] = {}
    own: list[dict[str, list[int]]] = []
    n_topics = len(LEGAL_TOPICS)

    # 1. documents owned by each topic
    for t, (family, _query, on_point, related, statutes) in enumerate(LEGAL_TOPICS):
        groups: dict[str, list[int]] = {k: [] for k in
                                        ("precedent", "appellate", "statute", "dissent", "order",
                                         "unjudged", "secondary")}
        case_names = []
        for i in range(int(rng.integers(2, 6))):
            title, name = legal_case_title(text, family, on_point[i % len(on_point)])
            case_names.append((name, on_point[i % len(on_point)]))
            groups["precedent"].append(len(docs))
            docs.append(Doc(title, t, "precedent"))
        phrases = related + on_point
        for i in range(int(rng.integers(3, 9))):
            title, name = legal_case_title(text, family, phrases[i % len(phrases)])
            case_names.append((name, phrases[i % len(phrases)]))
            groups["appellate"].append(len(docs))
            docs.append(Doc(title, t, "appellate"))
        for cite in statutes:
            if cite not in statute_docs:
                statute_docs[cite] = len(docs)
                docs.append(Doc(cite, -1, "statute"))
            groups["statute"].append(statute_docs[cite])
        # dissents in the very cases judged relevant: the classic near-miss
        dissent_from = rng.choice(len(case_names), size=int(rng.integers(1, 4)), replace=False)
        for j in dissent_from.tolist():
            name, phrase = case_names[j]
            groups["dissent"].append(len(docs))
            docs.append(Doc(f"Dissent: {name} — {phrase}", t, "dissent"))
        for _ in range(int(rng.integers(0, 3))):
            court, prefix, year = court_and_year(text, family)
            name = case_name(text, family, prefix)
            phrase = pick(text, on_point)
            title = f"Order: {name} ({court} {year}) — stipulated dismissal ({phrase})"
            groups["order"].append(len(docs))
            docs.append(Doc(title, t, "order"))
        for _ in range(int(rng.integers(5, 13))):
            title, _name = legal_case_title(text, family, pick(text, phrases))
            hidden = int(rng.choice(4, p=[0.35, 0.3, 0.25, 0.1]))
            groups["unjudged"].append(len(docs))
            docs.append(Doc(title, t, "unjudged", hidden))
        for _ in range(int(rng.integers(0, 3))):
            phrase = pick(text, phrases)
            title = (f"Law review: {pick(text, ARTICLE_OPENERS)} {phrase} "
                     f"({int(text.integers(40, 130))} {pick(text, JOURNALS)} {int(text.integers(1, 2400))}, "
                     f"{int(text.integers(1975, 2024))})")
            groups["secondary"].append(len(docs))
            docs.append(Doc(title, t, "secondary", 1))
        own.append(groups)

    assign_docnos(np.random.default_rng([seed, 101]), docs, "LEG-", 6)
    families = [topic[0] for topic in LEGAL_TOPICS]

    # 2. per query: qrels, candidate pool with latent features
    pools: list[Pool] = []
    for t in range(n_topics):
        groups = own[t]
        grade_of = {"precedent": 3, "appellate": 2, "statute": 1, "dissent": 0, "order": 0}
        members: list[tuple[int, str, int, bool]] = []   # (doc, kind, grade, judged)
        for kind, grade in grade_of.items():
            members += [(d, kind, grade, True) for d in groups[kind]]
        members += [(d, "unjudged", docs[d].hidden_grade, False) for d in groups["unjudged"]]
        members += [(d, "secondary", 1, False) for d in groups["secondary"]]
        taken = {d for d, *_ in members}

        neighbours = [d for u in range(n_topics) if u != t and families[u] == families[t]
                      for k in ("precedent", "appellate", "order", "unjudged") for d in own[u][k]
                      if d not in taken]
        far = [d for u in range(n_topics) if families[u] != families[t]
               for k in ("precedent", "appellate", "statute", "unjudged") for d in own[u][k] if d not in taken]
        far = list(dict.fromkeys(far))
        n_judged = sum(1 for m in members if m[3])
        target = int(rng.integers(15, 41))
        n_near_judged = int(np.clip(target - n_judged, 3, 40 - n_judged))
        n_near = min(len(neighbours), n_near_judged + int(rng.integers(15, 30)))
        near_pick = rng.choice(len(neighbours), size=n_near, replace=False).tolist()
        for i, j in enumerate(near_pick):
            # the judged near-misses are the ones a pooled system ranked high
            members.append((neighbours[j], "neighbour" if i < n_near_judged else "nearby", 0, i < n_near_judged))
        n_far = max(int(rng.integers(60, 90)), 2 * DEPTH - len(members))   # every run can fill 100
        far_pick = rng.choice(len(far), size=n_far, replace=False).tolist()
        members += [(far[j], "far", 0, False) for j in far_pick]

        kinds = [m[1] for m in members]
        grade = np.array([m[2] for m in members], dtype=np.int64)
        judged = np.array([m[3] for m in members], dtype=bool)
        lex = np.array([p["lex"][k] for k in kinds]) + np.where(
            np.array([k == "unjudged" for k in kinds]), p["lex_unjudged_per_grade"] * grade, 0.0)
        sem = np.array([p["sem"][k] for k in kinds]) + np.where(
            np.array([k == "unjudged" for k in kinds]), p["sem_unjudged_per_grade"] * grade, 0.0)
        pools.append(Pool([m[0] for m in members], grade, judged, kinds, lex, sem))

    # 3. runs: each system draws from its own stream, so tuning one leaves the others alone
    streams = {name: np.random.default_rng([seed, i]) for i, name in
               enumerate(["bm25", "bm25_qe", "dense", "bm25_ce", "scores"])}
    runs = {"bm25": [], "bm25_qe": [], "dense": [], "bm25_ce": []}
    tie_plan = legal_tie_plan(np.random.default_rng([seed, 99]), n_topics)
    for t, pool in enumerate(pools):
        qid = str(t + 1)
        n = len(pool.docs)
        kinds = np.array(pool.kind)
        relevant_judged = pool.judged & (pool.grade > 0)
        mismatch = relevant_judged & (rng.random(n) < p["mismatch_prob"])
        lex = pool.lex - p["mismatch_penalty"] * mismatch

        bm25_x = lex + streams["bm25"].normal(0.0, p["bm25_noise"], n)
        qe_x = (lex + p["qe_recover"] * mismatch + p["qe_drift"] * np.isin(kinds, ["neighbour", "nearby"])
                + streams["bm25_qe"].normal(0.0, p["qe_noise"], n))
        dense_x = pool.sem + streams["dense"].normal(0.0, p["dense_noise"], n)

        # cross-encoder: re-scores the BM25 candidates, nudging what it reads as relevant
        # upwards; on some queries it is fooled by the dissent (same facts as the majority)
        ce_rng = streams["bm25_ce"]
        fooled = ce_rng.random() < p["ce_dissent_fooled_prob"]
        relevance = pool.grade.astype(float)
        for kind, value in p["ce_relevance"].items():
            relevance[kinds == kind] = value
        ce_x = (bm25_x + p["ce_relevance_weight"] * relevance + ce_rng.normal(0.0, p["ce_noise"], n)
                + p["ce_dissent_fooled_boost"] * fooled * (kinds == "dissent"))

        bm25_top = top_k(bm25_x, DEPTH)
        ce_top = bm25_top[top_k(ce_x[bm25_top], DEPTH)]
        ranked = {"bm25": bm25_top, "bm25_qe": top_k(qe_x, DEPTH), "dense": top_k(dense_x, DEPTH),
                  "bm25_ce": ce_top}
        raw = {"bm25": bm25_x, "bm25_qe": qe_x, "dense": dense_x, "bm25_ce": ce_x}
        u = streams["scores"]
        ranges = {"bm25": (u.uniform(10.0, 13.5), u.uniform(19.0, 29.5), 4),
                  "bm25_qe": (u.uniform(10.0, 14.0), u.uniform(21.0, 29.9), 4),
                  "dense": (u.uniform(0.30, 0.46), u.uniform(0.74, 0.90), 6),
                  "bm25_ce": (u.uniform(-11.0, -6.5), u.uniform(4.5, 9.8), 4)}
        for name, order in ranked.items():
            lo, hi, decimals = ranges[name]
            ints = to_fixed(raw[name][order], lo, hi, decimals)
            docnos = [docs[pool.docs[i]].docno for i in order.tolist()]
            if name == "bm25":
                judged_grade = np.where(pool.judged, pool.grade, 0)[order]
                ints, docnos = apply_ties(ints, docnos, tie_plan.get(t, []), judged_grade)
            runs[name].extend(format_run_lines(qid, docnos, ints, decimals, name))

    qrels_lines = []
    for t, pool in enumerate(pools):
        rows = sorted((docs[d].docno, int(g)) for d, g, j in zip(pool.docs, pool.grade, pool.judged) if j)
        qrels_lines += [f"{t + 1} 0 {docno} {g}" for docno, g in rows]
    topics_lines = ["qid\ttext"] + [f"{t + 1}\t{topic[1]}" for t, topic in enumerate(LEGAL_TOPICS)]
    docs_lines = ["docno\ttitle"] + [f"{d.docno}\t{d.title}" for d in sorted(docs, key=lambda d: d.docno)]
    return {"qrels.txt": qrels_lines, "topics.tsv": topics_lines, "docs.tsv": docs_lines,
            **{f"{name}.run": lines for name, lines in runs.items()}}


def legal_tie_plan(rng: np.random.Generator, n_topics: int) -> dict[int, list[tuple[int, int]]]:
    """Tie groups for bm25.run: {topic: [(first rank index, group size)]}.

    BM25 gives identical scores to documents with identical term statistics (near
    duplicates, short statutes); two groups sit inside the top 10 so that the tie
    rule changes nDCG@10."""
    topics = rng.choice(n_topics, size=5, replace=False).tolist()
    plan: dict[int, list[tuple[int, int]]] = {}
    for i, t in enumerate(topics):
        start = [2, 6, 14, 37, 71][i]
        plan.setdefault(t, []).append((start, 2 if i % 2 else 3))
    plan.setdefault(topics[0], []).append((55, 2))
    return plan


def apply_ties(ints: np.ndarray, docnos: list[str], groups: list[tuple[int, int]], grades: np.ndarray):
    """Give each group the score of its first member. The file lists a tie group in
    docno-ascending order (as some engines do), the reverse of trec_eval's rule.
    A group planned inside the top 10 slides to the first place where the two orders
    give different grade sequences, so that the tie rule visibly changes nDCG@10."""
    ints = ints.copy()
    docnos = list(docnos)

    def order_matters(start: int, size: int) -> bool:
        members = sorted(zip(docnos[start:start + size], grades[start:start + size].tolist()))
        sequence = [grade for _docno, grade in members]
        return sequence != sequence[::-1]

    for start, size in groups:
        if start < 10:
            start = next((s for s in range(start, 10 - size + 1) if order_matters(s, size)), start)
        ints[start:start + size] = ints[start]
        docnos[start:start + size] = sorted(docnos[start:start + size])
    return ints, docnos


# --------------------------------------------------------------------------------------
# Web collection
# --------------------------------------------------------------------------------------

WEB_SITES = {
    "health": (["mayoclinic.org", "nih.gov", "cdc.gov", "nhs.uk"],
               ["webmd.com", "healthline.com", "medicalnewstoday.com", "clevelandclinic.org"],
               ["reddit.com/r/AskDocs", "patient.info/forums"]),
    "tech": (["docs.python.org", "developer.mozilla.org", "support.apple.com", "learn.microsoft.com"],
             ["stackoverflow.com", "geeksforgeeks.org", "howtogeek.com", "theverge.com"],
             ["reddit.com/r/techsupport", "superuser.com"]),
    "finance": (["irs.gov", "investor.gov", "consumerfinance.gov"],
                ["investopedia.com", "nerdwallet.com", "bankrate.com"],
                ["reddit.com/r/personalfinance", "bogleheads.org"]),
    "travel": (["travel.state.gov", "nps.gov", "lonelyplanet.com"],
               ["tripadvisor.com", "timeout.com", "ricksteves.com"],
               ["reddit.com/r/travel", "flyertalk.com"]),
    "food": (["seriouseats.com", "kingarthurbaking.com", "bonappetit.com"],
             ["allrecipes.com", "foodnetwork.com", "thekitchn.com"],
             ["reddit.com/r/Cooking", "chowhound.com"]),
    "home": (["energy.gov", "epa.gov", "familyhandyman.com"],
             ["thespruce.com", "bobvila.com", "homedepot.com"],
             ["reddit.com/r/HomeImprovement", "diychatroom.com"]),
    "science": (["nasa.gov", "britannica.com", "noaa.gov", "khanacademy.org"],
                ["wikipedia.org", "livescience.com", "scientificamerican.com"],
                ["reddit.com/r/askscience", "physicsforums.com"]),
    "auto": (["nhtsa.gov", "fueleconomy.gov", "caranddriver.com"],
             ["edmunds.com", "kbb.com", "cars.com"],
             ["reddit.com/r/MechanicAdvice", "bobistheoilguy.com"]),
    "careers": (["bls.gov", "studentaid.gov", "collegeboard.org"],
                ["indeed.com", "glassdoor.com", "usnews.com"],
                ["reddit.com/r/careerguidance", "quora.com"]),
    "pets": (["avma.org", "aspca.org", "akc.org"],
             ["petmd.com", "thesprucepets.com", "rover.com"],
             ["reddit.com/r/dogs", "catforum.com"]),
}
SPAM_SITES = ["best-deals-online.biz", "top10reviewz.net", "cheap-prices-now.com", "freedownloadhub.info",
              "coupon-codes-daily.com", "article-spinner.xyz"]

WEB_TOPICS = [
    ("health", "how to lower blood pressure naturally", "Lowering Blood Pressure Without Medication"),
    ("health", "symptoms of vitamin d deficiency", "Vitamin D Deficiency: Symptoms and Causes"),
    ("health", "is intermittent fasting safe", "Intermittent Fasting: Benefits and Risks"),
    ("health", "how long does the flu last", "How Long the Flu Lasts and When to Recover"),
    ("health", "migraine vs tension headache", "Migraine or Tension Headache? How to Tell"),
    ("health", "best stretches for lower back pain", "Stretches for Lower Back Pain Relief"),
    ("health", "how much water should i drink a day", "How Much Water to Drink Each Day"),
    ("health", "signs of dehydration in toddlers", "Dehydration in Toddlers: Warning Signs"),
    ("tech", "python list comprehension examples", "Python List Comprehensions by Example"),
    ("tech", "wifi keeps disconnecting windows 11", "Fixing Wi-Fi Drops on Windows 11"),
    ("tech", "git undo last commit", "Undoing the Last Commit in Git"),
    ("tech", "best budget laptop for students", "The Best Budget Laptops for Students"),
    ("tech", "how to free up space on iphone", "Freeing Up Storage on Your iPhone"),
    ("tech", "what is a vpn and do i need one", "What a VPN Does and When You Need One"),
    ("tech", "css center div vertically", "Centering a Div Vertically with CSS"),
    ("tech", "back up photos to the cloud", "Backing Up Your Photos to the Cloud"),
    ("finance", "roth ira vs traditional ira", "Roth IRA vs. Traditional IRA"),
    ("finance", "how to improve credit score fast", "Improving Your Credit Score Quickly"),
    ("finance", "how are capital gains taxed", "How Capital Gains Are Taxed"),
    ("finance", "first time home buyer programs", "First-Time Home Buyer Assistance Programs"),
    ("finance", "how to make a monthly budget", "Making a Monthly Budget That Works"),
    ("finance", "what is an index fund", "Index Funds Explained"),
    ("finance", "filing taxes as a freelancer", "Filing Taxes as a Freelancer"),
    ("travel", "best time to visit japan", "The Best Time of Year to Visit Japan"),
    ("travel", "things to do in lisbon", "Top Things to Do in Lisbon"),
    ("travel", "yellowstone camping reservations", "Camping Reservations in Yellowstone"),
    ("travel", "how to renew a us passport", "Renewing a U.S. Passport"),
    ("travel", "carry on luggage size limits", "Carry-On Luggage Size Limits by Airline"),
    ("travel", "cheap flights to europe tips", "Finding Cheap Flights to Europe"),
    ("food", "sourdough starter from scratch", "Making a Sourdough Starter from Scratch"),
    ("food", "how long to boil an egg", "How Long to Boil an Egg"),
    ("food", "easy vegetarian dinner recipes", "Easy Vegetarian Dinners for Weeknights"),
    ("food", "how to season a cast iron skillet", "Seasoning a Cast Iron Skillet"),
    ("food", "substitute for buttermilk", "Buttermilk Substitutes That Work"),
    ("food", "how to make cold brew coffee", "Cold Brew Coffee at Home"),
    ("home", "unclog a drain without chemicals", "Unclogging a Drain Without Chemicals"),
    ("home", "heat pump vs furnace cost", "Heat Pump vs. Furnace: Costs Compared"),
    ("home", "get rid of mold in bathroom", "Removing Mold from Your Bathroom"),
    ("home", "best indoor plants for low light", "Indoor Plants for Low Light"),
    ("home", "how to patch a drywall hole", "Patching a Hole in Drywall"),
    ("home", "are solar panels worth it", "Are Home Solar Panels Worth It?"),
    ("science", "why is the sky blue", "Why the Sky Is Blue"),
    ("science", "how do vaccines work", "How Vaccines Work"),
    ("science", "what causes the northern lights", "What Causes the Northern Lights"),
    ("science", "how far is mars from earth", "How Far Mars Is from Earth"),
    ("science", "what is climate change", "Climate Change: The Basics"),
    ("science", "how do black holes form", "How Black Holes Form"),
    ("auto", "when to replace car tires", "When to Replace Your Tires"),
    ("auto", "hybrid vs electric car", "Hybrid vs. Electric Cars"),
    ("auto", "check engine light meaning", "What the Check Engine Light Means"),
    ("auto", "how often to change oil", "How Often to Change Your Oil"),
    ("careers", "how to write a cover letter", "Writing a Cover Letter"),
    ("careers", "high paying jobs without a degree", "High-Paying Jobs Without a Degree"),
    ("careers", "fafsa deadline", "FAFSA Deadlines"),
    ("careers", "how to negotiate salary", "Negotiating Your Salary"),
    ("careers", "resume format tips", "Resume Format Tips"),
    ("pets", "how to house train a puppy", "House Training a Puppy"),
    ("pets", "can dogs eat grapes", "Can Dogs Eat Grapes?"),
    ("pets", "why does my cat vomit", "Why Cats Vomit"),
    ("pets", "best food for senior dogs", "Feeding Senior Dogs"),
]


def web_title(rng: np.random.Generator, grade: int, topic: int) -> str:
    category, query, headline = WEB_TOPICS[topic]
    auth, general, forums = WEB_SITES[category]
    year = int(rng.integers(2016, 2025))
    if grade == 4:
        return pick(rng, [f"{headline} | {pick(rng, auth)}",
                          f"{headline}: A Complete Guide | {pick(rng, auth)}"])
    if grade == 3:
        return pick(rng, [f"{headline} — What You Need to Know | {pick(rng, general)}",
                          f"{headline}: Expert Answers | {pick(rng, general + auth)}"])
    if grade == 2:
        return pick(rng, [f"{int(rng.integers(5, 16))} Tips: {headline} | {pick(rng, general)}",
                          f"{headline} (Updated {year}) | {pick(rng, general)}",
                          f"My Experience: {headline} | {pick(rng, ['medium.com', 'substack.com', 'blogspot.com'])}"])
    if grade == 1:
        return pick(rng, [f"{query}? | {pick(rng, forums)}", f"Re: {query} | {pick(rng, forums)}",
                          f"Question about {query} | {pick(rng, forums)}"])
    return pick(rng, [f"Buy {query} — Best Deals {year} | {pick(rng, SPAM_SITES)}",
                      f"{headline} — Sponsored | {pick(rng, SPAM_SITES)}",
                      f"{query} download free pdf | {pick(rng, SPAM_SITES)}",
                      f"Tag archive: {query} | {pick(rng, general)}"])


def build_web(seed: int = WEB_SEED, params: dict | None = None):
    p = WEB if params is None else params
    rng = np.random.default_rng(seed)            # structure: counts, grades, pools
    text = np.random.default_rng([seed, 100])    # wording only
    docs: list[Doc] = []
    own: list[dict[str, list[int]]] = []
    n_topics = len(WEB_TOPICS)
    for t in range(n_topics):
        counts = {4: int(rng.integers(0, 3)), 3: int(rng.integers(2, 6)), 2: int(rng.integers(4, 11)),
                  1: int(rng.integers(6, 15)), 0: int(rng.integers(4, 12))}
        if counts[4] + counts[3] == 0:
            counts[3] = 1
        groups: dict[str, list[int]] = {}
        for grade, count in counts.items():
            kind = "spam" if grade == 0 else str(grade)
            groups[kind] = []
            for _ in range(count):
                groups[kind].append(len(docs))
                docs.append(Doc(web_title(text, grade, t), t, kind, grade))
        groups["unjudged"] = []
        for _ in range(int(rng.integers(6, 15))):
            hidden = int(rng.choice(5, p=[0.35, 0.3, 0.2, 0.1, 0.05]))
            groups["unjudged"].append(len(docs))
            docs.append(Doc(web_title(text, hidden, t), t, "unjudged", hidden))
        own.append(groups)
    assign_docnos(np.random.default_rng([seed, 101]), docs, "WEB-", 7)
    categories = [topic[0] for topic in WEB_TOPICS]

    pools: list[Pool] = []
    for t in range(n_topics):
        members: list[tuple[int, str, int, bool]] = []
        for kind in ("4", "3", "2", "1", "spam"):
            members += [(d, kind, docs[d].hidden_grade, True) for d in own[t][kind]]
        members += [(d, "unjudged", docs[d].hidden_grade, False) for d in own[t]["unjudged"]]
        near = [d for u in range(n_topics) if u != t and categories[u] == categories[t]
                for k in ("4", "3", "2", "1", "unjudged") for d in own[u][k]]
        far = [d for u in range(n_topics) if categories[u] != categories[t]
               for k in ("3", "2", "1", "spam", "unjudged") for d in own[u][k]]
        near_pick = rng.choice(len(near), size=min(len(near), int(rng.integers(40, 60))), replace=False).tolist()
        n_near_judged = int(rng.integers(6, 16))
        for i, j in enumerate(near_pick):
            members.append((near[j], "neighbour" if i < n_near_judged else "background", 0, i < n_near_judged))
        far_pick = rng.choice(len(far), size=int(rng.integers(50, 80)), replace=False).tolist()
        members += [(far[j], "far", 0, False) for j in far_pick]

        kinds = [m[1] for m in members]
        grade = np.array([m[2] for m in members], dtype=np.int64)
        key = [int(k) if k.isdigit() else k for k in kinds]
        is_unjudged = np.array([k == "unjudged" for k in kinds])
        lex = np.array([p["lex"][k] for k in key]) + np.where(is_unjudged, p["lex_unjudged_per_grade"] * grade, 0.0)
        sem = np.array([p["sem"][k] for k in key]) + np.where(is_unjudged, p["sem_unjudged_per_grade"] * grade, 0.0)
        pools.append(Pool([m[0] for m in members], grade, np.array([m[3] for m in members]), kinds, lex, sem))

    streams = {name: np.random.default_rng([seed, i]) for i, name in enumerate(["lexical", "neural", "scores"])}
    runs = {"lexical": [], "neural": [], "hybrid": []}
    for t, pool in enumerate(pools):
        qid = str(201 + t)
        n = len(pool.docs)
        lexical_x = pool.lex + streams["lexical"].normal(0.0, p["lexical_noise"], n)
        neural_x = pool.sem + streams["neural"].normal(0.0, p["neural_noise"], n)
        miss_prob = np.array([p["neural_miss_prob"].get(int(g), 0.0) for g in pool.grade])
        missed = (streams["neural"].random(n) < miss_prob) & (pool.grade > 0)
        neural_x = np.where(missed, -np.inf, neural_x)
        lexical_top = top_k(lexical_x, DEPTH)
        neural_top = top_k(neural_x, DEPTH)
        assert np.isfinite(neural_x[neural_top]).all(), f"query {qid}: pool too small for the neural run"
        u = streams["scores"]
        lexical_ints = to_fixed(lexical_x[lexical_top], u.uniform(6.0, 9.0), u.uniform(17.0, 27.0), 4)
        neural_ints = to_fixed(neural_x[neural_top], u.uniform(0.52, 0.60), u.uniform(0.84, 0.95), 6)

        # hybrid: convex combination of min-max normalised scores over the union of both lists
        w = p["hybrid_neural_weight"]
        lexical_norm = np.zeros(n)
        neural_norm = np.zeros(n)
        lexical_norm[lexical_top] = (lexical_ints - lexical_ints[-1]) / (lexical_ints[0] - lexical_ints[-1])
        neural_norm[neural_top] = (neural_ints - neural_ints[-1]) / (neural_ints[0] - neural_ints[-1])
        hybrid_x = (1 - w) * lexical_norm + w * neural_norm
        union = np.zeros(n, dtype=bool)
        union[lexical_top] = True
        union[neural_top] = True
        hybrid_x = np.where(union, hybrid_x, -np.inf)
        hybrid_top = top_k(hybrid_x, DEPTH)
        span = hybrid_x[hybrid_top]
        hybrid_ints = to_fixed(span, float(span[-1]), float(span[0]), 6)

        for name, order, ints, decimals in (("lexical", lexical_top, lexical_ints, 4),
                                            ("neural", neural_top, neural_ints, 6),
                                            ("hybrid", hybrid_top, hybrid_ints, 6)):
            docnos = [docs[pool.docs[i]].docno for i in order.tolist()]
            runs[name].extend(format_run_lines(qid, docnos, ints, decimals, name))

    qrels_lines = []
    for t, pool in enumerate(pools):
        rows = sorted((docs[d].docno, int(g)) for d, g, j in zip(pool.docs, pool.grade, pool.judged) if j)
        qrels_lines += [f"{201 + t} 0 {docno} {g}" for docno, g in rows]
    topics_lines = ["qid\ttext"] + [f"{201 + t}\t{topic[1]}" for t, topic in enumerate(WEB_TOPICS)]
    docs_lines = ["docno\ttitle"] + [f"{d.docno}\t{d.title}" for d in sorted(docs, key=lambda d: d.docno)]
    return {"qrels.txt": qrels_lines, "topics.tsv": topics_lines, "docs.tsv": docs_lines,
            **{f"{name}.run": lines for name, lines in runs.items()}}


def write_collection(directory: Path, files: dict[str, list[str]]) -> None:
    for name, lines in files.items():
        write_text(directory / name, lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE,
                        help="directory that receives legal/ and web/ (default: ndcg_lab/sample_data/)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    write_collection(args.out / "legal", build_legal())
    write_collection(args.out / "web", build_web())
    print(f"wrote {args.out / 'legal'} and {args.out / 'web'} in {time.perf_counter() - started:.2f} s")


if __name__ == "__main__":
    main()
