use super::*;

#[test]
fn swapping_case_swaps_every_letter() {
    assert_eq!(swap_case("aBç"), "AbÇ");
}

#[test]
fn readings_of_an_ids_list() {
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<HashSet<_>>();
    let asked = vec!["a".to_string(), "b".to_string()];
    let all = set(&["a", "b"]);
    assert_eq!(Reading::of(&all, &all, &asked), vec![Reading::All]);
    assert_eq!(Reading::of(&set(&["b"]), &all, &asked), vec![Reading::Last]);
    assert_eq!(
        Reading::of(&set(&["a"]), &all, &asked),
        vec![Reading::First]
    );
    assert_eq!(Reading::of(&set(&[]), &all, &asked), vec![Reading::Nothing]);
    // Three asked, two found: neither the list nor one value.
    let asked3 = vec!["a".to_string(), "b".to_string(), "c".to_string()];
    let all3 = set(&["a", "b", "c"]);
    assert!(Reading::of(&set(&["b", "c"]), &all3, &asked3).is_empty());
}

#[test]
fn queries_show_as_typed() {
    let p = vec![
        ("search".to_string(), "a b".to_string()),
        ("page".to_string(), "2".to_string()),
    ];
    assert_eq!(show_query(&p), "search=\"a b\"&page=2");
}
