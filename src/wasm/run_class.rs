//! [`export_run!`]: one macro exports every run class, so each run crosses the boundary the
//! same way (`poll`, `handle(event)`, `result`) and no method is written out by hand.
//!
//! A class wraps a core [`Machine`](crate::runs::machine::Machine). Its events arrive as plain
//! JS objects (`{event: "page", page, unencodable}`) that serde reads into the machine's
//! `Event` enum; a wrong shape is `invalid-input` naming the event type. Constructors differ
//! per run and are written beside the invocation.

/// Exports the run class `$class` wrapping the machine `$inner`.
///
/// `context: session` passes the planner's session to the machine (`poll(planner)`,
/// `handle(planner, event)`); `context: none` exports `poll()` and `handle(event)` for runs
/// that hold their own state. The literals name the TypeScript types of the action, the
/// event, the reply and the result, which tsify declares.
macro_rules! export_run {
    (
        $(#[$doc:meta])*
        $class:ident wraps $inner:ty,
        context: session,
        types: ($action:literal, $event:literal, $reply:literal, $output:literal)
    ) => {
        $(#[$doc])*
        #[wasm_bindgen::prelude::wasm_bindgen]
        pub struct $class {
            pub(super) inner: $inner,
        }

        #[wasm_bindgen::prelude::wasm_bindgen]
        impl $class {
            /// The next action.
            #[wasm_bindgen(unchecked_return_type = $action)]
            pub fn poll(
                &mut self,
                planner: &mut super::planner::Planner,
            ) -> Result<wasm_bindgen::JsValue, wasm_bindgen::JsValue> {
                let action = crate::runs::machine::Machine::poll(&mut self.inner, &mut planner.inner)
                    .map_err(super::convert::to_js_error)?;
                super::convert::to_js(&action)
            }

            /// Takes back what happened (one event).
            #[wasm_bindgen(unchecked_return_type = $reply)]
            pub fn handle(
                &mut self,
                planner: &mut super::planner::Planner,
                #[wasm_bindgen(unchecked_param_type = $event)] event: wasm_bindgen::JsValue,
            ) -> Result<wasm_bindgen::JsValue, wasm_bindgen::JsValue> {
                let event = super::convert::from_js(event, $event)?;
                let reply =
                    crate::runs::machine::Machine::handle(&mut self.inner, &mut planner.inner, event)
                        .map_err(super::convert::to_js_error)?;
                super::convert::to_js(&reply)
            }

            /// What the run did (an error before the run is done).
            #[wasm_bindgen(unchecked_return_type = $output)]
            pub fn result(&self) -> Result<wasm_bindgen::JsValue, wasm_bindgen::JsValue> {
                let output = crate::runs::machine::Machine::result(&self.inner)
                    .map_err(super::convert::to_js_error)?;
                super::convert::to_js(&output)
            }
        }
    };
    (
        $(#[$doc:meta])*
        $class:ident wraps $inner:ty,
        context: none,
        types: ($action:literal, $event:literal, $reply:literal, $output:literal)
    ) => {
        $(#[$doc])*
        #[wasm_bindgen::prelude::wasm_bindgen]
        pub struct $class {
            pub(super) inner: $inner,
        }

        #[wasm_bindgen::prelude::wasm_bindgen]
        impl $class {
            /// The next action.
            #[wasm_bindgen(unchecked_return_type = $action)]
            pub fn poll(&mut self) -> Result<wasm_bindgen::JsValue, wasm_bindgen::JsValue> {
                let action = crate::runs::machine::Machine::poll(&mut self.inner, &mut ())
                    .map_err(super::convert::to_js_error)?;
                super::convert::to_js(&action)
            }

            /// Takes back what happened (one event).
            #[wasm_bindgen(unchecked_return_type = $reply)]
            pub fn handle(
                &mut self,
                #[wasm_bindgen(unchecked_param_type = $event)] event: wasm_bindgen::JsValue,
            ) -> Result<wasm_bindgen::JsValue, wasm_bindgen::JsValue> {
                let event = super::convert::from_js(event, $event)?;
                let reply = crate::runs::machine::Machine::handle(&mut self.inner, &mut (), event)
                    .map_err(super::convert::to_js_error)?;
                super::convert::to_js(&reply)
            }

            /// What the run did (an error before the run is done).
            #[wasm_bindgen(unchecked_return_type = $output)]
            pub fn result(&self) -> Result<wasm_bindgen::JsValue, wasm_bindgen::JsValue> {
                let output = crate::runs::machine::Machine::result(&self.inner)
                    .map_err(super::convert::to_js_error)?;
                super::convert::to_js(&output)
            }
        }
    };
}

pub(super) use export_run;
