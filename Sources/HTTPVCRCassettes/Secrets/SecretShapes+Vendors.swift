import Foundation

extension SecretShapes {
    /// The vendors' keys known by their shape alone, after gitleaks' rule set: each has a fixed prefix that ordinary
    /// text does not make by chance (a separator, a vendor's word) and a fixed or bounded length, so it is found
    /// under any name or none, with no keyword beside it. Left out, as Docs/Filters.md says why: rules that need a
    /// keyword nearby (Twilio, Mailgun, Telegram, …), keys with no fixed prefix (Azure AD secrets, MaxMind,
    /// Facebook app tokens), prefixes that base64, hex or words make by chance (`EAAA`, `cmVmd`, `4b1d`, `ABSK`,
    /// `SK`, `s.`, Airtable's `pat`), and webhook URLs.
    ///
    /// A class ends with a look-ahead rather than `\b` where a key may end in `-` or `_`, so that a longer token is
    /// no match at all rather than a match cut short.
    package static let vendorShapes: [Shape] = [
        Shape(
            "1Password secret",
            #"\bA3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\b|\bops_eyJ[A-Za-z0-9+/]{250,}={0,3}"#,
            anchors: ["A3-", "ops_eyJ"]
        ),
        Shape("Adobe client secret", #"\bp8e-[A-Za-z0-9]{32}\b"#, anchors: ["p8e-"]),
        Shape("age secret key", #"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b"#, anchors: ["AGE-SECRET-KEY-1"]),
        Shape("Alibaba access key ID", #"\bLTAI[A-Za-z0-9]{20}\b"#, anchors: ["LTAI"]),
        Shape(
            "Amazon Bedrock API key", #"\bbedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%_-]*"#,
            anchors: ["bedrock-api-key-"]
        ),
        Shape(
            "Anthropic API key", #"\bsk-ant-(?:api|admin)[0-9]{2}-[A-Za-z0-9_-]{93}AA(?![A-Za-z0-9_-])"#,
            anchors: ["sk-ant-"]
        ),
        Shape("Artifactory API key", #"\bAKCp[A-Za-z0-9]{69}\b"#, anchors: ["AKCp"]),
        Shape("Atlassian API token", #"\bATATT3[A-Za-z0-9_=-]{186}(?![A-Za-z0-9_=-])"#, anchors: ["ATATT3"]),
        Shape("Clojars token", #"(?i)\bCLOJARS_[a-z0-9]{60}\b"#, anchors: ["CLOJARS_"], ignoringCase: true),
        Shape("Cloudflare origin CA key", #"\bv1\.0-[a-f0-9]{24}-[a-f0-9]{146}\b"#, anchors: ["v1.0-"]),
        Shape("Databricks token", #"\bdapi[a-f0-9]{32}(?:-[0-9])?\b"#, anchors: ["dapi"]),
        Shape("DigitalOcean token", #"\bdo[opr]_v1_[a-f0-9]{64}\b"#, anchors: ["doo_v1_", "dop_v1_", "dor_v1_"]),
        Shape("Doppler token", #"\bdp\.pt\.[A-Za-z0-9]{43}\b"#, anchors: ["dp.pt."]),
        Shape("Duffel token", #"\bduffel_(?:test|live)_[A-Za-z0-9_=-]{43}(?![A-Za-z0-9_=-])"#, anchors: ["duffel_"]),
        Shape("Dynatrace token", #"\bdt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}\b"#, anchors: ["dt0c01."]),
        Shape("EasyPost key", #"\bEZ[AT]K[A-Za-z0-9]{54}\b"#, anchors: ["EZAK", "EZTK"]),
        Shape(
            "Flutterwave key", #"\bFLW(?:SECK|PUBK)_TEST-[a-hA-H0-9]{32}-X\b|\bFLWSECK_TEST-[a-hA-H0-9]{12}\b"#,
            anchors: ["FLWSECK_", "FLWPUBK_"]
        ),
        Shape(
            "Fly.io token",
            #"\b(?:fo1_[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])|fm1[ar]_[A-Za-z0-9+/]{100,}={0,3}|fm2_[A-Za-z0-9+/]{100,}={0,3})"#,
            anchors: ["fo1_", "fm1a_", "fm1r_", "fm2_"]
        ),
        Shape("Frame.io token", #"\bfio-u-[A-Za-z0-9_=-]{64}(?![A-Za-z0-9_=-])"#, anchors: ["fio-u-"]),
        Shape(
            "GitLab token",
            #"\b(?:gl(?:pat|ptt|rt|dt|ft|imt|agent|oas|soat|ffct|cbt)-[0-9A-Za-z_.-]{20,300}|GR1348941[0-9A-Za-z_-]{20,})"#,
            anchors: [
                "glpat-", "glptt-", "glrt-", "gldt-", "glft-", "glimt-", "glagent-", "gloas-", "glsoat-", "glffct-",
                "glcbt-", "GR1348941",
            ]
        ),
        Shape(
            "Grafana token",
            #"\b(?:eyJrIjoi[A-Za-z0-9]{70,400}={0,3}|glc_[A-Za-z0-9+/]{32,400}={0,3}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b)"#,
            anchors: ["eyJrIjoi", "glc_", "glsa_"]
        ),
        Shape(
            "Harness token", #"\b(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}\b"#,
            anchors: ["pat.", "sat."]
        ),
        Shape(
            "HashiCorp Vault token", #"\b(?:hvs\.[A-Za-z0-9_-]{90,120}|hvb\.[A-Za-z0-9_-]{138,300})(?![A-Za-z0-9_-])"#,
            anchors: ["hvs.", "hvb."]
        ),
        Shape(
            "Terraform Cloud token", #"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}(?![A-Za-z0-9_=-])"#,
            anchors: [".atlasv1."]
        ),
        Shape("Heroku API key", #"\bHRKU-AA[0-9A-Za-z_-]{58}(?![0-9A-Za-z_-])"#, anchors: ["HRKU-AA"]),
        Shape("Hugging Face token", #"\b(?:hf_|api_org_)[A-Za-z]{34}\b"#, anchors: ["hf_", "api_org_"]),
        Shape("Infracost token", #"\bico-[A-Za-z0-9]{32}\b"#, anchors: ["ico-"]),
        Shape("Intra42 secret", #"\bs-s4t2(?:ud|af)-[a-fA-F0-9]{64}\b"#, anchors: ["s-s4t2"]),
        Shape("Linear API key", #"\blin_api_[A-Za-z0-9]{40}\b"#, anchors: ["lin_api_"]),
        Shape("Notion token", #"\bntn_[0-9]{11}[A-Za-z0-9]{35}\b"#, anchors: ["ntn_"]),
        Shape("npm token", #"\bnpm_[A-Za-z0-9]{36}\b"#, anchors: ["npm_"]),
        Shape("Octopus Deploy API key", #"\bAPI-[A-Z0-9]{26}\b"#, anchors: ["API-"]),
        Shape(
            "OpenAI API key",
            #"\bsk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{58,74}T3BlbkFJ[A-Za-z0-9_-]{58,74}|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20})(?![A-Za-z0-9_-])"#,
            anchors: ["T3BlbkFJ"]
        ),
        Shape("OpenShift token", #"\bsha256~[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])"#, anchors: ["sha256~"]),
        Shape("Perplexity API key", #"\bpplx-[A-Za-z0-9]{48}\b"#, anchors: ["pplx-"]),
        Shape("PlanetScale token", #"\bpscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.-]{32,64}(?![A-Za-z0-9_=.-])"#, anchors: ["pscale_"]),
        Shape("Postman API key", #"\bPMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}\b"#, anchors: ["PMAK-"]),
        Shape("Prefect token", #"\bpnu_[A-Za-z0-9]{36}\b"#, anchors: ["pnu_"]),
        Shape("Pulumi token", #"\bpul-[a-f0-9]{40}\b"#, anchors: ["pul-"]),
        Shape("PyPI token", #"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,1000}"#, anchors: ["pypi-AgEIcHlwaS5vcmc"]),
        Shape("ReadMe API key", #"\brdme_[a-z0-9]{70}\b"#, anchors: ["rdme_"]),
        Shape("RubyGems API key", #"\brubygems_[a-f0-9]{48}\b"#, anchors: ["rubygems_"]),
        Shape("Scalingo token", #"\btk-us-[A-Za-z0-9_-]{48}(?![A-Za-z0-9_-])"#, anchors: ["tk-us-"]),
        Shape("SendGrid API key", #"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])"#, anchors: ["SG."]),
        Shape("Brevo API key", #"\bxkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}\b"#, anchors: ["xkeysib-"]),
        Shape(
            "Sentry token", #"\bsntry(?:u_[a-f0-9]{64}\b|s_eyJ[A-Za-z0-9+/=_]{60,})"#, anchors: ["sntryu_", "sntrys_"]
        ),
        Shape(
            "SettleMint token", #"\bsm_(?:aat|pat|sat)_[A-Za-z0-9]{16}\b"#, anchors: ["sm_aat_", "sm_pat_", "sm_sat_"]
        ),
        Shape("Shippo token", #"\bshippo_(?:live|test)_[a-fA-F0-9]{40}\b"#, anchors: ["shippo_"]),
        Shape(
            "Shopify token", #"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"#,
            anchors: ["shpat_", "shpca_", "shppa_", "shpss_"]
        ),
        Shape("Sourcegraph token", #"\bsgp_(?:(?:[a-fA-F0-9]{16}|local)_)?[a-fA-F0-9]{40}\b"#, anchors: ["sgp_"]),
        Shape("Square access token", #"\bsq0atp-[A-Za-z0-9_-]{22,60}(?![A-Za-z0-9_-])"#, anchors: ["sq0atp-"]),
    ]
}
