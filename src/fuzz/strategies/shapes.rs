//! The fields of each operation's body (§4.1 mall list, §4.2 mall products) and how each
//! varies: the baseline and one [`Field`] per member.

use serde_json::{Value, json};

use super::draw::{Gen, just, select};
use super::edges::{count_edges, object_edges, sn_edges, string_edges};
use super::members::{count_value, mall_sn_value, object_value, string_value};
use super::values::{Magnitude, magnitude, weighted};
use crate::fuzz::body::{Edit, Limits};
use crate::fuzz::known::Known;

/// How one field of the body is mutated and varied.
pub(super) struct Field {
    /// Where it is.
    pub(super) pointer: &'static str,
    /// Weight among the single-field mutations.
    pub(super) weight: u32,
    /// Invalid or unusual values.
    pub(super) mutation: Gen<Value>,
    /// Other valid values, if any.
    pub(super) valid: Option<Gen<Value>>,
    /// Edge values swept one by one (after removing the field), most generic first.
    pub(super) edges: Vec<Gen<Value>>,
}

impl Field {
    pub(super) fn edit(&self) -> Gen<Edit> {
        let p = self.pointer;
        weighted(vec![
            (9, self.mutation.clone().map(move |v| Edit::Set(p, v))),
            (1, just(Edit::Remove(p))),
        ])
    }

    pub(super) fn valid_edit(&self) -> Option<Gen<Edit>> {
        let p = self.pointer;
        self.valid.clone().map(|s| s.map(move |v| Edit::Set(p, v)))
    }
}

/// Roles other than the one used in the spec's calls.
pub(super) const ROLES: &[&str] = &[
    "super_admin",
    "admin",
    "SUPER_ADMIN",
    "Super_Admin",
    "superadmin",
    "super-admin",
    "staff",
    "cashier",
    "owner",
    "merchant",
    "guest",
    "root",
    "超级管理员",
];

pub(super) const SORT_FIELDS: &[&str] = &[
    "id",
    "ctime",
    "mallSn",
    "mallName",
    "state",
    "createTime",
    "ID",
    "-id",
    "id DESC",
    "*",
];

pub(super) const DIRECTIONS: &[&str] = &[
    "DESC",
    "desc",
    "ASC",
    "asc",
    "Desc",
    "descending",
    "random",
    "0",
    "-1",
];

pub(super) fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

pub(super) fn text_at<'a>(base: &'a Value, pointer: &str) -> &'a str {
    base.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

pub(super) fn seller_fields(
    known: &Known,
    base: &Value,
    at: &'static [&'static str; 4],
    limits: Limits,
) -> Vec<Field> {
    let identities: Vec<Value> = known
        .identities
        .iter()
        .skip(1)
        .map(|i| i.to_json())
        .collect();
    let mut merchant_ids: Vec<String> = known
        .identities
        .iter()
        .map(|i| i.merchant_id.clone())
        .collect();
    merchant_ids.extend(known.unknown_merchant_ids.iter().cloned());
    let user_ids: Vec<String> = known
        .identities
        .iter()
        .map(|i| i.merchant_user_id.clone())
        .collect();
    let [seller, merchant_id, user_id, role] = *at;
    let seller_base = base.pointer(seller).cloned().unwrap_or(Value::Null);
    vec![
        Field {
            pointer: seller,
            weight: 2,
            mutation: object_value(&seller_base, &identities),
            edges: object_edges(&seller_base, &identities),
            valid: (!identities.is_empty()).then(|| select(identities.clone())),
        },
        Field {
            pointer: merchant_id,
            weight: 3,
            mutation: string_value(text_at(base, merchant_id), &merchant_ids, limits),
            edges: string_edges(text_at(base, merchant_id), &merchant_ids),
            valid: Some(select(merchant_ids.clone()).map(Value::String)),
        },
        Field {
            pointer: user_id,
            weight: 3,
            mutation: string_value(text_at(base, user_id), &user_ids, limits),
            edges: string_edges(text_at(base, user_id), &user_ids),
            valid: Some(select(user_ids.clone()).map(Value::String)),
        },
        Field {
            pointer: role,
            weight: 3,
            mutation: string_value(text_at(base, role), &strings(ROLES), limits),
            edges: string_edges(text_at(base, role), &strings(ROLES)),
            valid: Some(select(strings(ROLES)).map(Value::String)),
        },
    ]
}

pub(super) fn appid_field(known: &Known, limits: Limits) -> Field {
    Field {
        pointer: "/appid",
        weight: 1,
        mutation: string_value(&known.appid, &[], limits),
        edges: string_edges(&known.appid, &[]),
        valid: None,
    }
}

/// The baseline of an endpoint and how each of its fields varies.
pub(super) struct Shape {
    pub(super) baseline: Value,
    pub(super) fields: Vec<Field>,
    /// Objects extra members can be added to.
    pub(super) parents: Vec<&'static str>,
}

pub(super) fn list_shape(known: &Known, limits: Limits) -> Shape {
    let baseline = known.list_body(known.me(), 10);
    let sns: Vec<String> = known.malls.iter().map(|m| m.mall_sn.clone()).collect();
    let mut fields = vec![
        appid_field(known, limits),
        Field {
            pointer: "/filter",
            weight: 1,
            mutation: object_value(&baseline["filter"], &[]),
            edges: object_edges(&baseline["filter"], &[]),
            valid: None,
        },
    ];
    fields.extend(seller_fields(
        known,
        &baseline,
        &[
            "/filter/seller",
            "/filter/seller/merchantId",
            "/filter/seller/merchantUserId",
            "/filter/seller/role",
        ],
        limits,
    ));
    let cursor_valid = if sns.is_empty() {
        just(Value::Null)
    } else {
        weighted(vec![
            (1, just(Value::Null)),
            (2, select(sns.clone()).map(Value::String)),
        ])
    };
    fields.extend([
        Field {
            pointer: "/sort",
            weight: 1,
            mutation: object_value(&baseline["sort"], &[]),
            edges: object_edges(&baseline["sort"], &[]),
            valid: None,
        },
        Field {
            pointer: "/sort/sortField",
            weight: 2,
            mutation: string_value("id", &strings(SORT_FIELDS), limits),
            edges: string_edges("id", &strings(SORT_FIELDS)),
            valid: None,
        },
        Field {
            pointer: "/sort/sort",
            weight: 2,
            mutation: string_value("DESC", &strings(DIRECTIONS), limits),
            edges: string_edges("DESC", &strings(DIRECTIONS)),
            valid: Some(select(&["DESC", "desc"][..]).map(|s| json!(s))),
        },
        Field {
            pointer: "/cursor",
            weight: 1,
            mutation: object_value(&baseline["cursor"], &[]),
            edges: object_edges(&baseline["cursor"], &[]),
            valid: None,
        },
        Field {
            pointer: "/cursor/cursorField",
            weight: 2,
            mutation: string_value("id", &strings(SORT_FIELDS), limits),
            edges: string_edges("id", &strings(SORT_FIELDS)),
            valid: Some(just(Value::Null)),
        },
        Field {
            pointer: "/cursor/endCursor",
            weight: 3,
            mutation: mall_sn_value(&sns, limits),
            edges: sn_edges(&sns),
            valid: Some(cursor_valid),
        },
        Field {
            pointer: "/cursor/count",
            weight: 3,
            mutation: count_value(),
            edges: count_edges(),
            valid: Some(
                magnitude(Magnitude {
                    lo: 1,
                    common: 1000,
                    hi: 1000,
                })
                .map(Value::from),
            ),
        },
    ]);
    Shape {
        baseline,
        fields,
        parents: vec!["", "/filter", "/filter/seller", "/sort", "/cursor"],
    }
}

pub(super) fn products_shape(known: &Known, limits: Limits) -> Shape {
    let (mall_sn, signature) = known
        .target_mall
        .clone()
        .unwrap_or_else(|| ("0".to_string(), String::new()));
    let baseline = json!({
        "appid": known.appid,
        "seller": known.me().to_json(),
        "mallID": {"mallSn": mall_sn, "signature": signature},
    });
    let sns: Vec<String> = known.malls.iter().map(|m| m.mall_sn.clone()).collect();
    let signatures: Vec<String> = known.malls.iter().map(|m| m.signature.clone()).collect();
    let pairs: Vec<Value> = known
        .malls
        .iter()
        .filter(|m| m.mall_sn != mall_sn)
        .map(|m| json!({"mallSn": m.mall_sn, "signature": m.signature}))
        .collect();
    let mut fields = vec![appid_field(known, limits)];
    fields.extend(seller_fields(
        known,
        &baseline,
        &[
            "/seller",
            "/seller/merchantId",
            "/seller/merchantUserId",
            "/seller/role",
        ],
        limits,
    ));
    fields.extend([
        Field {
            pointer: "/mallID",
            weight: 3,
            mutation: object_value(&baseline["mallID"], &pairs),
            edges: object_edges(&baseline["mallID"], &pairs),
            valid: (!pairs.is_empty()).then(|| select(pairs.clone())),
        },
        Field {
            pointer: "/mallID/mallSn",
            weight: 3,
            mutation: mall_sn_value(&sns, limits),
            edges: sn_edges(&sns),
            valid: None,
        },
        Field {
            pointer: "/mallID/signature",
            weight: 3,
            mutation: string_value(&signature, &signatures, limits),
            edges: string_edges(&signature, &signatures),
            valid: None,
        },
    ]);
    Shape {
        baseline,
        fields,
        parents: vec!["", "/seller", "/mallID"],
    }
}
