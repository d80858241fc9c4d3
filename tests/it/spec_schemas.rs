//! `specs/schemas/*.json` are generated from the OpenAPI document; this fails when they drift.
//! Regenerate with: LINKCERT_WRITE_SCHEMAS=1 cargo test --test it spec_schemas

use std::path::Path;

#[test]
fn schema_files_match_the_openapi_document() {
    let spec = linkcert::spec::Spec::from_file(Path::new(linkcert::spec::SPEC_PATH)).unwrap();
    let dir = Path::new("specs/schemas");
    let files = spec.json_schema_files();
    if std::env::var_os("LINKCERT_WRITE_SCHEMAS").is_some() {
        std::fs::create_dir_all(dir).unwrap();
        for old in std::fs::read_dir(dir).unwrap() {
            std::fs::remove_file(old.unwrap().path()).unwrap();
        }
        for (name, text) in &files {
            std::fs::write(dir.join(name), text).unwrap();
        }
    }
    let on_disk: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    let mut on_disk = on_disk;
    on_disk.sort();
    let expected: Vec<String> = files.keys().cloned().collect();
    assert_eq!(
        on_disk, expected,
        "regenerate: LINKCERT_WRITE_SCHEMAS=1 cargo test --test it spec_schemas"
    );
    for (name, text) in &files {
        let disk = std::fs::read_to_string(dir.join(name)).unwrap();
        assert_eq!(
            &disk, text,
            "{name} drifted; regenerate: LINKCERT_WRITE_SCHEMAS=1 cargo test --test it spec_schemas"
        );
    }
    // The files are usable JSON Schemas.
    for text in files.values() {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        linkcert::spec::schema::validator(&v).unwrap();
    }
    // The embedded copy is the file.
    assert_eq!(
        std::fs::read_to_string(linkcert::spec::SPEC_PATH).unwrap(),
        linkcert::spec::EMBEDDED_YAML
    );
}
