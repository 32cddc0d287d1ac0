//! How to talk to the reference server: the appid, the demo key, the signer, the merchants and a
//! runnable curl example. `mallcheck serve` prints it when it starts and in `--help`; the README
//! repeats it. Everything in it is public demo data of this module's siblings (`data.rs`), never
//! a user's key: `serve` always verifies with [`DEMO_SIGN_KEY`].

use std::fmt::Write as _;

use crate::server::data::{
    DEMO_APPID, DEMO_SIGN_KEY, Dataset, EMPTY, Identity, MAIN, OTHER, SINGLE, Shape,
};
use crate::server::routes::{MALL_LIST_PATH, MALL_PRODUCTS_PATH};

/// The base URL the `--help` text shows (the default port of `serve`).
pub const HELP_BASE_URL: &str = "http://127.0.0.1:8080";

/// The line that opens the curl example; the example runs to the next empty line. Its lines
/// are short and unindented so that neither clap's wrapping of `--help` (80 columns and more)
/// nor a paste into a shell breaks it.
pub const EXAMPLE_HEADING: &str = "Example (sh; needs curl and md5sum):";

/// The line that opens the ready-to-paste `export` lines and run command of the guide.
pub const RUN_HEADING: &str = "Test it with mallcheck (paste into another shell):";

/// `export` lines for every setting `mallcheck run` needs against `base_url`, as the main
/// merchant, then the run command.
pub fn run_lines(base_url: &str) -> String {
    format!(
        "export MALLCHECK_BASE_URL={base_url}\n\
         export MALLCHECK_APPID={DEMO_APPID}\n\
         export MALLCHECK_MERCHANT_ID={}\n\
         export MALLCHECK_MERCHANT_USER_ID={}\n\
         export MALLCHECK_SIGN_KEY={DEMO_SIGN_KEY}\n\
         mallcheck run\n",
        MAIN.merchant_id, MAIN.merchant_user_id
    )
}

/// The merchants of the seed data as the guide names them, with how many malls each has.
fn merchants(data: &Dataset) -> [(&'static str, Identity, usize); 4] {
    [
        ("main", MAIN),
        ("single", SINGLE),
        ("empty", EMPTY),
        ("other", OTHER),
    ]
    .map(|(name, who)| (name, who, data.malls_of(who.merchant_id).len()))
}

/// The first-page mall list body of `who` that the example sends, on short lines.
pub fn list_body(who: Identity) -> String {
    let pad = "   ";
    format!(
        "{{\"appid\": \"{DEMO_APPID}\",\n \
         \"filter\": {{\"seller\": {{\n\
         {pad}\"merchantId\": \"{}\",\n\
         {pad}\"merchantUserId\": \"{}\",\n\
         {pad}\"role\": \"{}\"}}}},\n \
         \"sort\": {{\"sortField\": \"id\", \"sort\": \"DESC\"}},\n \
         \"cursor\": {{\"cursorField\": \"id\", \"endCursor\": null, \"count\": 10}}}}",
        who.merchant_id, who.merchant_user_id, who.role
    )
}

/// The guide for a server at `base_url`.
pub fn guide(base_url: &str) -> String {
    let data = Dataset::new(Shape::Standard);
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(w, "How to call it (spec §4, §5):");
    let _ = writeln!(w, "  POST {base_url}{MALL_LIST_PATH}");
    let _ = writeln!(w, "  POST {base_url}{MALL_PRODUCTS_PATH}");
    let _ = writeln!(w, "  appid   {DEMO_APPID}");
    let _ = writeln!(w, "  key     {DEMO_SIGN_KEY} (a public demo key)");
    let _ = writeln!(
        w,
        "  signer  md5: Authorization: <appid> <signature>, the signature being"
    );
    let _ = writeln!(
        w,
        "          the lowercase hex md5 of the raw body bytes followed by the key"
    );
    let _ = writeln!(w, "  merchants (role super_admin):");
    for (name, who, malls) in merchants(&data) {
        let plural = if malls == 1 { "" } else { "s" };
        let _ = writeln!(
            w,
            "    {name:<7} {:<9} merchantId     {}",
            format!("{malls} mall{plural}"),
            who.merchant_id
        );
        let _ = writeln!(w, "    {:<17} merchantUserId {}", "", who.merchant_user_id);
    }
    if let Some(mall) = data.malls_of(MAIN.merchant_id).first() {
        let _ = writeln!(w, "  a mall of main ({} products):", mall.product_count);
        let _ = writeln!(
            w,
            "    mallSn {}  signature {}",
            mall.mall_sn, mall.signature
        );
    }
    let _ = writeln!(
        w,
        "  (mallcheck run without --base-url uses the same key, appid and main)"
    );
    let _ = writeln!(w);
    let _ = writeln!(w, "{RUN_HEADING}");
    let _ = write!(w, "{}", run_lines(base_url));
    let _ = writeln!(w);
    let _ = writeln!(w, "{EXAMPLE_HEADING}");
    let _ = writeln!(w, "body=$(cat <<'EOF'");
    let _ = writeln!(w, "{}", list_body(MAIN));
    let _ = writeln!(w, "EOF");
    let _ = writeln!(w, ")");
    let _ = writeln!(
        w,
        "sig=$(printf '%s%s' \"$body\" {DEMO_SIGN_KEY} | md5sum | cut -d' ' -f1)"
    );
    let _ = writeln!(w, "curl -sS \"{base_url}{MALL_LIST_PATH}\" \\");
    let _ = writeln!(w, "  -H 'Content-Type: application/json' \\");
    let _ = writeln!(w, "  -H \"Authorization: {DEMO_APPID} $sig\" -d \"$body\"");
    out
}

/// The `--help` text of `serve`: the guide for the default port.
pub fn help() -> String {
    guide(HELP_BASE_URL)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sign::{Signer, SignerKind};

    #[test]
    fn the_guide_names_appid_key_signer_and_every_merchant() {
        let text = guide("http://h:1");
        for needle in [
            DEMO_APPID,
            DEMO_SIGN_KEY,
            "md5",
            MAIN.merchant_id,
            MAIN.merchant_user_id,
            SINGLE.merchant_id,
            EMPTY.merchant_id,
            OTHER.merchant_id,
            "http://h:1/optimus/core/open/mall/queryMallList",
            "export MALLCHECK_BASE_URL=http://h:1\n",
            "\nmallcheck run\n",
        ] {
            assert!(text.contains(needle), "{needle} missing:\n{text}");
        }
    }

    #[test]
    fn every_line_fits_80_columns() {
        for line in help().lines() {
            assert!(line.chars().count() < 80, "{line}");
        }
    }

    #[tokio::test]
    async fn the_example_body_is_a_valid_request_and_the_signature_recipe_matches_the_signer() {
        let body = list_body(MAIN);
        let value: serde_json::Value = serde_json::from_str(&body).expect("JSON");
        let schemas = crate::spec::schemas::SchemaSet::embedded().expect("schemas");
        assert!(schemas.validate("mall-list-request", &value).is_empty());
        // printf '%s%s' "$body" key | md5sum: md5 of the body bytes followed by the key.
        assert!(guide("http://h:1").contains(&body));
        let mut joined = body.clone().into_bytes();
        joined.extend_from_slice(DEMO_SIGN_KEY.as_bytes());
        let by_hand = hex::encode(<md5::Md5 as md5::Digest>::digest(&joined));
        let signer = Signer::new(SignerKind::Md5, DEMO_SIGN_KEY.to_string());
        assert_eq!(signer.sign(body.as_bytes()).await.expect("md5"), by_hand);
    }
}
